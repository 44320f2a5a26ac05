package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/memory"
)

type rememberOptions struct {
	as      string
	core    bool
	caution bool
	until   string
}

func rememberCmd(g *Global) *cobra.Command {
	var o rememberOptions
	c := &cobra.Command{
		Use:   "remember TEXT",
		Short: "Save one plain fact to the inbox; it is searchable at once",
		Long: "Save one plain fact to the inbox. Refused with a sentence: empty or over-long text, several facts at once,\n" +
			"and anything that looks like a secret. --as records the line as written by someone else (trust: outside).\n" +
			"--core keeps it in the router as a core fact; --caution --until DATE shows it in the router until that day.",
		Args:               cobra.MinimumNArgs(1),
		DisableFlagParsing: true, // any text, even "-----BEGIN …": textArgs parses the flags
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := textArgs(cmd, args)
			if err != nil {
				return err
			}
			return runRemember(cmd.Context(), g, o, args)
		},
	}
	c.Flags().StringVar(&o.as, "as", "", "who wrote it, when not the owner (e.g. \"Claude Code\")")
	c.Flags().BoolVar(&o.core, "core", false, "a core fact, kept in the router (the owner's own words only)")
	c.Flags().BoolVar(&o.caution, "caution", false, "a caution, shown in the router until --until (the owner's own words only)")
	c.Flags().StringVar(&o.until, "until", "", "the caution's last day, YYYY-MM-DD; the nightly job moves it to its note's timeline after")
	return c
}

func runRemember(ctx context.Context, g *Global, o rememberOptions, args []string) error {
	return g.write(ctx, func(a *app.App) error {
		res, err := a.Memory.Remember(ctx, owner(o.as), memory.RememberInput{Text: strings.Join(args, " "), Core: o.core, Caution: o.caution, Until: o.until})
		if err != nil {
			return err
		}
		return g.emit(res, func(w io.Writer) { _, _ = fmt.Fprintln(w, res.Text) })
	})
}

// owner is the actor for words typed at the command line: the owner's own, or (--as) someone else's.
func owner(as string) memory.Actor {
	if as == "" || strings.EqualFold(as, "owner") {
		return memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	}
	return memory.Actor{Who: as, Via: "cli", Trust: "outside"}
}
