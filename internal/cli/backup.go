package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/backup"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/say"
)

// backupStatusOutput is the --json shape of box backup status.
type backupStatusOutput struct {
	Backups []backup.Status `json:"backups"`
}

// backupAddOutput is the --json shape of box backup add and remove.
type backupAddOutput struct {
	Name  string `json:"name"`
	URL   string `json:"url,omitempty"`
	Token bool   `json:"token,omitempty"` // a token was sealed in the vault
	Text  string `json:"text"`
}

func backupCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "backup", Short: "Copy the box off this machine to git remotes (docs/BACKUP.md)"}
	c.AddCommand(backupAddCmd(g), backupStatusCmd(g), backupNowCmd(g), backupRemoveCmd(g))
	return c
}

func backupAddCmd(g *Global) *cobra.Command {
	var tokenStdin bool
	c := &cobra.Command{
		Use:   "add NAME URL [--token-from-stdin]",
		Short: "Add a backup: any git remote (a bare repository on a disk or server, GitHub, Gitea)",
		Long: "Add a backup remote. URL is an absolute path, file:///…, ssh://…, user@host:path or https://…. ssh uses your\n" +
			"agent; an https token is read from stdin (--token-from-stdin), sealed in the vault and handed to git by the\n" +
			"box's own askpass, never on the command line. box serve pushes main to it within --backup-after of each commit.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBackupAdd(cmd.Context(), g, args[0], args[1], tokenStdin)
		},
	}
	c.Flags().BoolVar(&tokenStdin, "token-from-stdin", false, "read an access token for an https remote from stdin (one line)")
	return c
}

func runBackupAdd(ctx context.Context, g *Global, name, url string, tokenStdin bool) error {
	token := ""
	if tokenStdin {
		data, err := io.ReadAll(io.LimitReader(g.IO.In, 64<<10))
		if err != nil {
			return usageErr("the token could not be read from stdin: %v", err)
		}
		if token = strings.TrimSpace(string(data)); token == "" {
			return usageErr("--token-from-stdin read nothing: pipe the token in (box backup add … --token-from-stdin < tokenfile)")
		}
	}
	return g.write(ctx, func(a *app.App) error {
		if err := a.Backups.Add(ctx, name, url, token); err != nil {
			return err
		}
		out := backupAddOutput{Name: name, URL: git.ShownURL(url), Token: token != "",
			Text: fmt.Sprintf("Added the backup %s; box serve pushes to it after each batch of changes, and `box backup now` pushes at once.", name)}
		return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
	})
}

func backupStatusCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "List the backups and how far behind each is",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return g.read(ctx, func(a *app.App) error {
				st, err := a.Backups.Status(ctx)
				if err != nil {
					return err
				}
				return g.emit(backupStatusOutput{Backups: st}, func(w io.Writer) {
					if len(st) == 0 {
						_, _ = fmt.Fprintln(w, "No backups yet: add one with `box backup add NAME URL`.")
					}
					for _, s := range st {
						_, _ = fmt.Fprint(w, backupStatusLines(s))
					}
				})
			})
		},
	}
}

// backupStatusLines is one backup as box backup status prints it: how far behind it is and, when its
// last push failed, the failure and what happens next, as --json says (failing, error, stopped, nextRetry).
func backupStatusLines(s backup.Status) string {
	state := "up to date"
	switch {
	case s.Pushed == "":
		state = fmt.Sprintf("never pushed (%s to send)", say.Count(s.Behind, "commit"))
	case s.Behind > 0:
		state = say.Count(s.Behind, "commit") + " behind"
	}
	out := fmt.Sprintf("%-12s %s  %s\n", s.Name, s.URL, state)
	if !s.Failing {
		return out
	}
	next := "tried again at the next commit"
	switch {
	case s.Stopped:
		next = "stopped until you act (`box backup now` tries it again)"
	case !s.NextRetry.IsZero():
		next = "retry at " + s.NextRetry.Local().Format("2 Jan 15:04:05")
	}
	return out + fmt.Sprintf("%-12s failing: %s\n%-12s %s\n", "", s.Error, "", next)
}

func backupNowCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "now",
		Short: "Push the box to every backup now, one line per backup",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return g.read(ctx, func(a *app.App) error {
				round, err := a.Backups.PushAll(ctx, false, true)
				if err != nil {
					return err
				}
				if err := g.emit(round, func(w io.Writer) {
					if len(round.Pushed) == 0 {
						_, _ = fmt.Fprintln(w, "No backups yet: add one with `box backup add NAME URL`.")
					}
					for _, p := range round.Pushed {
						switch {
						case p.Error != "":
							_, _ = fmt.Fprintf(w, "%s: failed: %s\n", p.Remote, p.Error)
						case p.Unchanged:
							_, _ = fmt.Fprintf(w, "%s: up to date\n", p.Remote)
						default:
							_, _ = fmt.Fprintf(w, "%s: pushed %s\n", p.Remote, p.Commit)
						}
					}
				}); err != nil {
					return err
				}
				if n := round.Failed(); n > 0 {
					return exitError{ExitFailure} // each failure is printed above
				}
				return nil
			})
		},
	}
}

func backupRemoveCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Forget a backup and its token (the remote itself is left as it is)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.write(ctx, func(a *app.App) error {
				if err := a.Backups.Remove(ctx, args[0]); err != nil {
					return err
				}
				out := backupAddOutput{Name: args[0], Text: "Removed the backup " + args[0] + "; what it holds is left as it is."}
				return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
			})
		},
	}
}

func restoreCmd(g *Global) *cobra.Command {
	var tokenStdin bool
	c := &cobra.Command{
		Use:   "restore URL DIR [--token-from-stdin]",
		Short: "Make a working box in DIR from a backup (keys, sessions and passkeys are not restored)",
		Long: "Make a working box in DIR (absent or empty) from a backup: its main, or its only branch. What is not in git\n" +
			"is not restored: passkeys, web sessions, other assistants' keys and vault secrets. Run `box serve` in the new\n" +
			"box and make a new passkey with the link it prints, then new keys for your assistants.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			token := ""
			if tokenStdin {
				data, err := io.ReadAll(io.LimitReader(g.IO.In, 64<<10))
				if err != nil || strings.TrimSpace(string(data)) == "" {
					return usageErr("--token-from-stdin read nothing: pipe the token in")
				}
				token = strings.TrimSpace(string(data))
			}
			res, err := app.Restore(cmd.Context(), args[0], g.abs(args[1]), token, app.Options{Progress: g.progress("indexing"), Now: g.clock()})
			if err != nil {
				return err
			}
			for _, n := range res.Notes {
				g.note("box: %s", n)
			}
			return g.emit(res, func(w io.Writer) {
				_, _ = fmt.Fprintf(w, "Restored the box into %s.\n", res.Root)
				_, _ = fmt.Fprintf(w, "Not restored (they are not in git): %s.\n", strings.Join(res.NotRestored, "; "))
				_, _ = fmt.Fprintln(w, "Run `box serve` there and make a new passkey with the link it prints; then make new keys for your assistants.")
			})
		},
	}
	c.Flags().BoolVar(&tokenStdin, "token-from-stdin", false, "read an access token for an https remote from stdin (one line)")
	return c
}
