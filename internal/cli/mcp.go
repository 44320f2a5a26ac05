package cli

import (
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
)

func (a *App) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the box's MCP tools on stdin/stdout, for a local agent (.mcp.json)",
		Long: "Serve the box's MCP tools over stdio for an agent on this machine. Writes are recorded under the client's\n" +
			"own name from initialize, with trust outside, like every assistant.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openService(cmd.Context(), false, "")
			if err != nil {
				return err
			}
			defer s.Close()
			// A local process running as the owner's OS user is the owner (DESIGN §8, threat model), so it gets
			// every checkbox; its words are still another assistant's, so they are recorded as outside.
			srv := s.mcp.Server(mcp.Conn{Host: "local", Caps: keys.All})
			t := &sdk.IOTransport{Reader: io.NopCloser(a.IO.In), Writer: nopWriteCloser{a.IO.Out}}
			return srv.Run(cmd.Context(), t)
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
