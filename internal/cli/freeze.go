package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
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

// runFreeze sets the frozen flag and records it in the diary. Freezing works on a frozen box (it is how
// one gets out of trouble); a locked box refuses both (exit 7), as it refuses every write.
func runFreeze(ctx context.Context, g *Global, on bool) error {
	return g.read(ctx, func(a *app.App) error {
		locked, err := a.State.Locked(ctx)
		if err != nil {
			return errs.Wrap("cli.freeze", errs.Locked, err, "The box could not read whether it is locked, so it takes no write")
		}
		if locked {
			return errs.E("cli.freeze", errs.Locked, "The box is locked; open it with your passkey first.")
		}
		if err := a.State.SetFrozen(ctx, on); err != nil {
			return err
		}
		out := freezeOutput{Frozen: on, Text: "The box is unfrozen."}
		op := "unfreeze"
		if on {
			out.Text, op = "The box is frozen: no assistant can read, do or talk until you run box unfreeze.", "freeze"
		}
		res, err := a.Box.Do(ctx, box.Change{Actor: owner(""), Op: op, Switch: "change", Summary: "owner " + op + "d the box", Permanent: true,
			Apply: func(*box.Tx) error { return nil }})
		if err != nil {
			return err
		}
		out.Entry = res.EntryID
		return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
	})
}
