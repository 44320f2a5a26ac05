package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
)

type keysNewOptions struct {
	name string
	caps keys.Caps
}

// keysNewOutput is the --json shape of box keys new: the connection and, once, its key.
type keysNewOutput struct {
	keys.Connection
	Key string `json:"key"`
}

// keysListOutput is the --json shape of box keys list.
type keysListOutput struct {
	Keys []keys.Connection `json:"keys"`
}

func keysCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "keys", Short: "Make, list and revoke keys for other assistants (mbx_…)"}
	c.AddCommand(keysNewCmd(g), keysListCmd(g), keysRevokeCmd(g))
	return c
}

func keysNewCmd(g *Global) *cobra.Command {
	var o keysNewOptions
	c := &cobra.Command{
		Use:   "new --name NAME [--memory] [--build]",
		Short: "Make a key; it is shown once and stored only as a hash",
		Long: "Make a key for another assistant. Reading memory is always in; tick more with the flags. A key lasts\n" +
			"6 months, or 30 days when it can build. \"Give other assistants access\" at Never refuses new keys.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runKeysNew(cmd.Context(), g, o) },
	}
	c.Flags().StringVar(&o.name, "name", "", "who the key is for, e.g. \"Claude Code\"")
	c.Flags().BoolVar(&o.caps.Memory, "memory", false, "tick Memory: save to memory and to-dos")
	c.Flags().BoolVar(&o.caps.Build, "build", false, "tick Can build for my box (the key lasts 30 days)")
	return c
}

// runKeysNew makes a key for the owner at the command line: a local owner needs no card, but the access
// switch at Never still refuses, and the key is in the diary.
func runKeysNew(ctx context.Context, g *Global, o keysNewOptions) error {
	if o.name == "" {
		return usageErr("a key needs --name, such as the assistant it is for (--name \"Claude Code\")")
	}
	return g.write(ctx, func(a *app.App) error {
		if err := a.Gate.Check(ctx, gate.Access, gate.Asker{Owner: true, Via: "cli"}, "a key for "+o.name); err != nil {
			return err
		}
		conn, token, err := a.Keys.Make(ctx, a.Box, o.name, o.caps, owner(""))
		if err != nil {
			return err
		}
		return g.emit(keysNewOutput{conn, token}, func(w io.Writer) {
			_, _ = fmt.Fprintln(w, token)
			g.note("key %s for %q: %s; expires %s. It is shown only now: keep it somewhere safe.",
				conn.ID, conn.Name, strings.Join(conn.Caps.Names(), ", "), conn.Expires.Format(time.DateOnly))
		})
	})
}

func keysListCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the keys: checkboxes, expiry, revoked, last use",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runKeysList(cmd.Context(), g) },
	}
}

func runKeysList(ctx context.Context, g *Global) error {
	return g.read(ctx, func(a *app.App) error {
		list, err := a.Keys.List(ctx)
		if err != nil {
			return err
		}
		return g.emit(keysListOutput{Keys: list}, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			_, _ = fmt.Fprintln(tw, "ID\tNAME\tCHECKBOXES\tEXPIRES\tSTATE\tLAST USED")
			for _, k := range list {
				_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, strings.Join(k.Caps.Names()[1:], ","),
					k.Expires.Format(time.DateOnly), keyState(k, a.Now()), lastUse(k, a.Now().Location()))
			}
			_ = tw.Flush()
		})
	})
}

func keyState(k keys.Connection, now time.Time) string {
	switch {
	case !k.Revoked.IsZero():
		return "revoked"
	case !now.Before(k.Expires):
		return "expired"
	}
	return "active"
}

func lastUse(k keys.Connection, loc *time.Location) string {
	if k.LastUsed.IsZero() {
		return "never"
	}
	s := k.LastUsed.In(loc).Format("2006-01-02 15:04")
	if k.LastHost != "" {
		s += " from " + k.LastHost
	}
	return s
}

func keysRevokeCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a key; its next call is refused",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runKeysRevoke(cmd.Context(), g, args) },
	}
}

// runKeysRevoke revokes a key. It is a protective act, like freeze: it works on a frozen box (a key that
// leaked is why one freezes), and a locked box refuses it (exit 7), as it refuses every write.
func runKeysRevoke(ctx context.Context, g *Global, args []string) error {
	return g.protect(ctx, func(a *app.App) error {
		conn, err := a.Keys.Disconnect(ctx, a.Box, args[0], owner(""), "box keys revoke")
		if err != nil {
			return err
		}
		return g.emit(conn, func(w io.Writer) { _, _ = fmt.Fprintf(w, "revoked %s (%s)\n", conn.ID, conn.Name) })
	})
}
