package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/exports"
)

// ExportOutput is `box export --json` (docs/CLI.md): what was written where.
type ExportOutput struct {
	exports.Result
}

func exportCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "export KIND DIR|FILE",
		Short: "Write the memory out for other tools: " + strings.Join(exports.Kinds, ", "),
		Long: "Write the memory out: markdown (a clean Obsidian-ready copy of _content/ into a new or empty DIR),\n" +
			"server-memory (a JSONL FILE the reference MCP memory server loads: notes as entities, facts as observations,\n" +
			"links as relations, unfiled lines on one inbox entity), json (one FILE with every note, line and card and\n" +
			"who last changed each). The destination must be outside the box.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := runExport(cmd.Context(), g, args)
			if err != nil {
				return err
			}
			return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
		},
	}
}

// runExport writes the discovered box as the kind args[0] to args[1].
func runExport(ctx context.Context, g *Global, args []string) (ExportOutput, error) {
	var out ExportOutput
	err := g.read(ctx, func(a *app.App) error {
		res, err := exports.Export(ctx, args[0], a.Root, g.abs(args[1]), exports.Options{Progress: g.progress("exporting")})
		out.Result = res
		return err
	})
	return out, err
}
