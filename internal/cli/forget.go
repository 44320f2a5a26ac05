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

type forgetOptions struct{ yes bool }

func forgetCmd(g *Global) *cobra.Command {
	var o forgetOptions
	c := &cobra.Command{
		Use:   "forget WORDS",
		Short: "Remove the lines that contain all the words (whole words); more than 5 needs --yes",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runForget(cmd.Context(), g, o, args) },
	}
	c.Flags().BoolVar(&o.yes, "yes", false, "confirm removing more than 5 lines")
	return c
}

func runForget(ctx context.Context, g *Global, o forgetOptions, args []string) error {
	return g.change(ctx, "box forget", func(a *app.App) error {
		res, err := a.Memory.Forget(ctx, owner(""), memory.ForgetInput{Words: strings.Join(args, " "), Confirm: o.yes})
		if err != nil {
			return err
		}
		err = g.emit(res, func(w io.Writer) {
			for _, mt := range res.Matched {
				_, _ = fmt.Fprintf(w, "%s  %s\n", mt.Path, mt.Text)
			}
			_, _ = fmt.Fprintln(w, res.Text)
		})
		if err == nil && res.NeedsConfirm {
			return exitError{code: ExitRefused}
		}
		return err
	})
}
