package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/gate"
)

// switchItem is one switch in box switches --json.
type switchItem struct {
	Name    string   `json:"name"`    // change, send, share, access, delete
	Label   string   `json:"label"`   // "Change my box"
	Value   string   `json:"value"`   // just-do-it, ask-me, never
	Choices []string `json:"choices"` // the values it allows
}

// switchesOutput is the --json shape of box switches.
type switchesOutput struct {
	Switches []switchItem `json:"switches"`
	Entry    string       `json:"entry,omitempty"` // the diary entry of a change
}

func switchesCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "switches [NAME VALUE]",
		Short: "Show the five switches, or set one (change, send, share, access, delete to just-do-it, ask-me or never)",
		Long: "With no arguments, what the box may do on its own. With NAME VALUE, set one switch: a change with a diary\n" +
			"line, which undo reverses. Values: just-do-it, ask-me, never (\"Ask me\" and the like are read too);\n" +
			"access and delete cannot be just-do-it.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 0 && len(args) != 2 {
				return usageErr("give no arguments to see the switches, or NAME VALUE to set one (box switches send never)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runSwitches(cmd.Context(), g, args) },
	}
}

func runSwitches(ctx context.Context, g *Global, args []string) error {
	show := func(a *app.App, entry string) error {
		sw, err := a.Gate.Switches(ctx)
		if err != nil {
			return err
		}
		out := switchesOutput{Entry: entry}
		for _, n := range gate.SwitchNames {
			out.Switches = append(out.Switches, switchItem{Name: n, Label: gate.Label(n), Value: sw.Of(n), Choices: gate.Choices(n)})
		}
		return g.emit(out, func(w io.Writer) {
			for _, s := range out.Switches {
				_, _ = fmt.Fprintf(w, "%-7s %-12s %s\n", s.Name, gate.ChoiceLabel(s.Value), s.Label)
			}
		})
	}
	if len(args) == 0 {
		return g.read(ctx, func(a *app.App) error { return show(a, "") })
	}
	name, value := strings.ToLower(args[0]), choiceOf(args[1])
	if gate.Label(name) == "" {
		return usageErr("%q is not a switch: use one of %s", args[0], strings.Join(gate.SwitchNames, ", "))
	}
	return g.write(ctx, func(a *app.App) error {
		res, err := a.Gate.SetSwitch(ctx, local, name, value)
		if err != nil {
			return err
		}
		return show(a, res.EntryID)
	})
}

// choiceOf reads a switch value as the owner may type it: "never", "Ask me", "just_do_it".
func choiceOf(s string) string {
	return strings.NewReplacer(" ", "-", "_", "-").Replace(strings.ToLower(strings.TrimSpace(s)))
}
