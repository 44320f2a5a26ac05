package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/gate"
)

// cardsListOutput is the --json shape of box cards list.
type cardsListOutput struct {
	Cards []gate.ApprovalCard `json:"cards"`
}

// cardDecision is the --json shape of box cards approve and decline.
type cardDecision struct {
	Card   gate.ApprovalCard `json:"card"`
	Status string            `json:"status"` // approved, declined
	Text   string            `json:"text"`
	Secret string            `json:"secret,omitempty"` // an approved key, shown once
	// Build is what an approved build's card installed, as it stands after: a connector's status and
	// health once its tests ran.
	Build *builds.Summary `json:"build,omitempty"`
}

// local is how the owner decides at the command line: a process running as the owner's OS user with the
// box's files is the owner (docs/GATE.md), so it needs no passkey; the diary says "cli".
var local = gate.By{Via: "cli", Local: true}

func cardsCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "cards", Short: "The approval cards waiting for the owner: list, approve, decline"}
	c.AddCommand(cardsListCmd(g), cardsApproveCmd(g), cardsDeclineCmd(g))
	return c
}

func cardsListCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the cards waiting for the owner, oldest first",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runCardsList(cmd.Context(), g) },
	}
}

func runCardsList(ctx context.Context, g *Global) error {
	return g.read(ctx, func(a *app.App) error {
		cards, err := a.Gate.Waiting(ctx)
		if err != nil {
			return err
		}
		out := cardsListOutput{Cards: append([]gate.ApprovalCard{}, cards...)}
		return g.emit(out, func(w io.Writer) {
			if len(out.Cards) == 0 {
				g.note("box: no card is waiting")
			}
			for _, c := range out.Cards {
				by := ""
				if !c.FromOwner() {
					by = "  (sent by " + c.ProposedBy.Who + ")"
				}
				_, _ = fmt.Fprintf(w, "%s  %s%s\n", c.ID, c.Title, by)
				// A connector call's card shows every argument whole (docs/SECURITY.md).
				for _, arg := range connectors.CallArgs(c.Action) {
					_, _ = fmt.Fprintf(w, "    %s: %s\n", arg.Key, strings.ReplaceAll(arg.Value, "\n", "\n      "))
				}
			}
		})
	})
}

func cardsApproveCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "approve ID",
		Short: "Say yes to a card: its exact action runs, if nothing it binds changed and its switch allows it",
		Long: "Approve a waiting card as the owner: the same path as the passkey in the web UI. The action is rebuilt\n" +
			"from the box as it is now and must hash to the card's hash, and its switch must not be at Never;\n" +
			"otherwise nothing runs and the card is put away. The diary records the owner's yes, via cli.\n" +
			"A connector's card waits for its tests and prints how they ended (on, or failed and why).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCardsApprove(cmd.Context(), g, args) },
	}
}

func runCardsApprove(ctx context.Context, g *Global, args []string) error {
	return g.write(ctx, func(a *app.App) error {
		done, err := a.Gate.Approve(ctx, args[0], local)
		if err != nil {
			return err
		}
		out := cardDecision{Card: done.Card, Status: gate.StatusApproved, Text: done.Text, Secret: done.Secret}
		if st, err := a.Builds.StatusFor(ctx, done.Card.ID, ""); err == nil {
			out.Build = st.Build
		}
		return g.emit(out, func(w io.Writer) {
			if out.Secret != "" {
				_, _ = fmt.Fprintln(w, out.Secret)
				g.note("box: %s", out.Text)
				return
			}
			_, _ = fmt.Fprintln(w, out.Text)
		})
	})
}

type cardsDeclineOptions struct{ note string }

func cardsDeclineCmd(g *Global) *cobra.Command {
	var o cardsDeclineOptions
	c := &cobra.Command{
		Use:   "decline ID [--note TEXT]",
		Short: "Say no to a card: it is put away unrun (with --note, what should be different)",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runCardsDecline(cmd.Context(), g, o, args) },
	}
	c.Flags().StringVar(&o.note, "note", "", "what should be different (the owner's \"Change it\")")
	return c
}

func runCardsDecline(ctx context.Context, g *Global, o cardsDeclineOptions, args []string) error {
	return g.write(ctx, func(a *app.App) error {
		c, err := a.Gate.Decline(ctx, args[0], o.note, local)
		if err != nil {
			return err
		}
		out := cardDecision{Card: c, Status: gate.StatusDeclined, Text: "Declined: " + c.Title + ". Nothing ran."}
		return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
	})
}
