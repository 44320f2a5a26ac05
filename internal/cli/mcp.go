package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
)

func mcpCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the box's MCP tools on stdin/stdout, for a local agent (.mcp.json)",
		Long: "Serve the box's MCP tools over stdio for an agent on this machine. Writes are recorded under the client's\n" +
			"own name from initialize, with trust outside, like every assistant.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(cmd.Context(), g) },
	}
}

// stdioConn is the local agent of box mcp: a process running as the owner's OS user is the owner (docs/GATE.md,
// the threat model), so it gets every checkbox; its words are still another assistant's, so they are
// recorded as outside, and its cards count against the limits of one connection, "local".
var stdioConn = mcp.Conn{Host: "local", KeyID: "local", Caps: keys.All}

func runMCP(ctx context.Context, g *Global) error {
	return g.readMode(ctx, app.Serve, func(a *app.App) error {
		srv := a.MCP("", Version).Server(stdioConn)
		return srv.Run(ctx, mcp.Stdio(g.IO.In, g.IO.Out))
	})
}
