package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/errs"
)

type chatOptions struct{ chat string }

func chatCmd(g *Global) *cobra.Command {
	var o chatOptions
	c := &cobra.Command{
		Use:   "chat MESSAGE [--chat ID]",
		Short: "One turn of the box's chat: the brain answers from your memory, streamed (without a brain: patterns and search)",
		Long: "One turn of the box's chat. With a brain the answer streams to stdout as it comes; the turn is kept in the\n" +
			"conversation's history (_content/chats/) and its cost in the usage ledger. --chat goes on with a conversation\n" +
			"(its id is printed on stderr, and in --json). A provider failure is one sentence and exit 4 (refused key,\n" +
			"no credit, rate limit) or 7 (down, timeout).",
		Args:               cobra.MinimumNArgs(1),
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := textArgs(cmd, args)
			if err != nil {
				return err
			}
			return runChat(cmd.Context(), g, o, args)
		},
	}
	c.Flags().StringVar(&o.chat, "chat", "", "the conversation to go on with")
	return c
}

func runChat(ctx context.Context, g *Global, o chatOptions, args []string) error {
	return g.read(ctx, func(a *app.App) error {
		if err := a.Writable(ctx); err != nil {
			return err
		}
		streamed := false
		emit := func(e brain.Event) {
			if g.JSON {
				return
			}
			switch e.Type {
			case "text":
				streamed = true
				_, _ = io.WriteString(g.IO.Out, e.Text)
			case "restart":
				if streamed {
					_, _ = io.WriteString(g.IO.Out, "\n")
				}
				g.note("(handed to the main model)")
			case "tool":
				g.note("(%s…)", e.Tool)
			case "note":
				g.note("%s", e.Text)
			}
		}
		res, err := a.Brain.Chat(ctx, brain.ChatInput{Chat: o.chat, Text: strings.Join(args, " "), Via: "cli"}, emit)
		if res.Reply == "" && err != nil {
			return err
		}
		if werr := g.emit(res, func(w io.Writer) {
			switch {
			case !streamed:
				_, _ = fmt.Fprintln(w, res.Reply)
			case res.Failed != "":
				_, _ = fmt.Fprintln(w, "\n"+res.Failed)
			default:
				_, _ = fmt.Fprintln(w)
			}
			if res.Chat != "" {
				g.note("chat %s · %s · %d calls · %s", res.Chat, res.Model, res.Calls, cost(res))
			}
		}); werr != nil {
			return werr
		}
		if err != nil {
			return exitError{code: exitCode(errs.Wrap("cli.chat", errs.KindOf(err), err, ""))}
		}
		return nil
	})
}

func cost(res brain.ChatResult) string {
	if !res.CostKnown {
		return "cost unknown"
	}
	return fmt.Sprintf("$%.4f", res.Cost)
}
