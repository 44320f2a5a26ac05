package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/keys"
)

func (a *App) keysCmd() *cobra.Command {
	c := &cobra.Command{Use: "keys", Short: "Make, list and revoke keys for other assistants (mbx_…)"}
	c.AddCommand(a.keysNewCmd(), a.keysListCmd(), a.keysRevokeCmd())
	return c
}

// withKeys opens the state of the discovered box, runs fn, and closes it.
func (a *App) withKeys(ctx context.Context, fn func(s *keys.Store) error) error {
	root, err := a.serveRoot(ctx, false)
	if err != nil {
		return err
	}
	s, err := keys.Open(root, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

func (a *App) keysNewCmd() *cobra.Command {
	var name string
	var caps keys.Caps
	c := &cobra.Command{
		Use:   "new --name NAME [--memory] [--messages] [--build]",
		Short: "Make a key; it is shown once and stored only as a hash",
		Long: "Make a key for another assistant. Reading memory is always in; tick more with the flags. A key lasts\n" +
			"6 months, or 30 days when it can build. \"Give other assistants access\" at Never refuses new keys.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usageErr("a key needs --name, such as the assistant it is for (--name \"Claude Code\")")
			}
			return a.withKeys(cmd.Context(), func(s *keys.Store) error {
				conn, token, err := s.New(cmd.Context(), name, caps)
				if err != nil {
					return err
				}
				if err := a.recordAccess(cmd.Context(), "key", fmt.Sprintf("owner made a key for %s (%s): %s",
					conn.Name, conn.ID, strings.Join(conn.Caps.Names(), ", "))); err != nil {
					s.Revoke(cmd.Context(), conn.ID) // no key without its diary line
					return err
				}
				out := struct {
					keys.Connection
					Key string `json:"key"`
				}{conn, token}
				return a.emit(out, func(w io.Writer) {
					fmt.Fprintln(w, token)
					a.note("key %s for %q: %s; expires %s. It is shown only now: keep it somewhere safe.",
						conn.ID, conn.Name, strings.Join(conn.Caps.Names(), ", "), conn.Expires.Format(time.DateOnly))
				})
			})
		},
	}
	c.Flags().StringVar(&name, "name", "", "who the key is for, e.g. \"Claude Code\"")
	c.Flags().BoolVar(&caps.Memory, "memory", false, "tick Memory: save to memory and to-dos")
	c.Flags().BoolVar(&caps.Messages, "messages", false, "tick My messages and mail (read only)")
	c.Flags().BoolVar(&caps.Build, "build", false, "tick Can build for my box (the key lasts 30 days)")
	return c
}

func (a *App) keysListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the keys: checkboxes, expiry, revoked, last use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withKeys(cmd.Context(), func(s *keys.Store) error {
				list, err := s.List(cmd.Context())
				if err != nil {
					return err
				}
				return a.emit(map[string]any{"keys": list}, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tNAME\tCHECKBOXES\tEXPIRES\tSTATE\tLAST USED")
					for _, k := range list {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, strings.Join(k.Caps.Names()[1:], ","),
							k.Expires.Format(time.DateOnly), keyState(k), lastUse(k))
					}
					tw.Flush()
				})
			})
		},
	}
}

func keyState(k keys.Connection) string {
	switch {
	case !k.Revoked.IsZero():
		return "revoked"
	case !time.Now().Before(k.Expires):
		return "expired"
	}
	return "active"
}

func lastUse(k keys.Connection) string {
	if k.LastUsed.IsZero() {
		return "never"
	}
	s := k.LastUsed.Local().Format("2006-01-02 15:04")
	if k.LastHost != "" {
		s += " from " + k.LastHost
	}
	return s
}

func (a *App) keysRevokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a key; its next call is refused",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withKeys(cmd.Context(), func(s *keys.Store) error {
				conn, err := s.Revoke(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if err := a.recordAccess(cmd.Context(), "revoke", fmt.Sprintf("owner revoked the key for %s (%s)", conn.Name, conn.ID)); err != nil {
					return err
				}
				return a.emit(conn, func(w io.Writer) { fmt.Fprintf(w, "revoked %s (%s)\n", conn.ID, conn.Name) })
			})
		},
	}
}

// recordAccess writes the diary line of an access decision the owner made at the command line (a key made
// or revoked): keys live in .box/state.db, outside the tree, so the diary is their history.
func (a *App) recordAccess(ctx context.Context, op, summary string) error {
	return a.withBox(func(b *box.Box) error {
		_, err := b.Do(ctx, box.Change{Actor: box.Actor{Who: "owner", Via: "cli", Trust: "own"}, Op: op, Switch: "access", Summary: summary,
			Apply: func(*box.Tx) error { return nil }})
		return err
	})
}
