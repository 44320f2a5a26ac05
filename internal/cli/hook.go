package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/hooks"
	"github.com/boxmem/box/internal/wire"
)

func (a *App) hookCmd() *cobra.Command {
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
			return a.runAgentHook(cmd.Context(), event)
		},
	}
}

// runAgentHook runs one hook; whatever happens, the agent gets exit 0 and nothing, unless the hook chose
// to answer (exit 2 only for a card the edit broke, as box validate --hook does).
func (a *App) runAgentHook(ctx context.Context, event string) error {
	data, err := io.ReadAll(io.LimitReader(a.IO.In, 16<<20+1))
	if err != nil {
		return nil
	}
	getenv := a.IO.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	res := hooks.Run(ctx, event, data, hooks.Env{BoxFlag: a.abs(a.BoxFlag), BoxEnv: a.abs(getenv("BOX_DIR")), Cwd: a.IO.Cwd, Budget: wire.Timeout(event)})
	if res.Out != nil {
		enc := json.NewEncoder(a.IO.Out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res.Out); err != nil {
			return nil
		}
	}
	if res.Stderr != "" {
		fmt.Fprint(a.IO.Err, res.Stderr)
	}
	if res.Code != 0 {
		return exitError{res.Code}
	}
	return nil
}
