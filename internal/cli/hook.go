package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/hooks"
	"github.com/boxmem/box/internal/wire"
)

func hookCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:    "hook EVENT",
		Short:  "Answer an agent hook (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, Stop, SessionEnd)",
		Long:   "Reads the agent's hook JSON on stdin and answers on stdout in the Claude Code hook protocol. Installed by box wire; fails open: any problem means exit 0 and no output, logged to .box/logs/hooks.log. See docs/HOOKS.md.",
		Hidden: true,
		Args:   cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			event := ""
			if len(args) > 0 {
				event = args[0]
			}
			return runAgentHook(cmd.Context(), g, event)
		},
	}
}

// runAgentHook runs one hook; whatever happens, the agent gets exit 0 and nothing, unless the hook chose
// to answer (exit 2 only for a card the edit broke, as box validate --hook does).
func runAgentHook(ctx context.Context, g *Global, event string) error {
	data, err := io.ReadAll(io.LimitReader(g.IO.In, 16<<20+1))
	if err != nil {
		return nil // fail open: an unreadable payload is answered with nothing
	}
	res := hooks.Run(ctx, event, data, hooks.Env{BoxFlag: g.abs(g.BoxFlag), BoxEnv: g.abs(g.IO.Getenv("BOX_DIR")), Cwd: g.IO.Cwd,
		Budget: wire.Timeout(event), Open: openHookServices})
	if res.Out != nil {
		enc := json.NewEncoder(g.IO.Out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res.Out); err != nil {
			return nil // fail open: the agent went away
		}
	}
	if res.Stderr != "" {
		_, _ = fmt.Fprint(g.IO.Err, res.Stderr)
	}
	if res.Code != 0 {
		return exitError{res.Code}
	}
	return nil
}

// openHookServices opens the box at root for a hook: the composition root in its light mode.
func openHookServices(ctx context.Context, root string) (*hooks.Services, error) {
	a, err := app.Open(ctx, root, app.Options{Mode: app.Hook})
	if err != nil {
		return nil, err
	}
	return &hooks.Services{Memory: a.Memory, Quiet: a.State.Quiet, Close: a.Close}, nil
}
