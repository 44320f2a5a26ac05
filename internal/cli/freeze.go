package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
)

// freezeOutput is the --json shape of box freeze and box unfreeze.
type freezeOutput struct {
	Frozen bool   `json:"frozen"`
	Entry  string `json:"entry"`
	Text   string `json:"text"`
}

func freezeCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "freeze",
		Short: "Freeze the box: no assistant can read, do or talk until you unfreeze it",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runFreeze(cmd.Context(), g, true) },
	}
}

func unfreezeCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "unfreeze",
		Short: "Unfreeze the box",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runFreeze(cmd.Context(), g, false) },
	}
}

// runFreeze sets the frozen flag and records it in the diary (App.Freeze): it works on a frozen box; a
// locked box refuses both (exit 7), as it refuses every write.
func runFreeze(ctx context.Context, g *Global, on bool) error {
	return g.read(ctx, func(a *app.App) error {
		res, err := a.Freeze(ctx, local, on)
		if err != nil {
			return err
		}
		out := freezeOutput{Frozen: on, Entry: res.EntryID, Text: "The box is unfrozen."}
		if on {
			out.Text = "The box is frozen: no assistant can read, do or talk until you run box unfreeze."
		}
		return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
	})
}
