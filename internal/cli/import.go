package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/imports"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/say"
	"github.com/boxmem/box/internal/usage"
)

// importOptions are `box import`'s flags.
type importOptions struct {
	dryRun  bool
	extract bool
}

// ImportOutput is `box import --json` (docs/CLI.md): what came in, or on --dry-run what would.
type ImportOutput struct {
	memory.ImportResult
	Path string `json:"path"` // the source as given
	// Read is how many conversations the brain read for facts with --extract, and Spent what those
	// calls cost in US dollars (as the providers priced them).
	Read  int     `json:"read,omitempty"`
	Spent float64 `json:"spent,omitempty"`
}

func importCmd(g *Global) *cobra.Command {
	var opts importOptions
	c := &cobra.Command{
		Use:   "import KIND PATH",
		Short: "Bring in memories from elsewhere: " + strings.Join(imports.Kinds, ", "),
		Long: "Bring in what another memory holds: facts become inbox lines (your own words, with where each came from),\n" +
			"conversations and notes become documents under _content/imports/. One commit, one diary entry, one undo;\n" +
			"importing the same file again adds only what changed. Secret-like lines are left out and listed by place.\n" +
			"Kinds: server-memory (memory.jsonl), basic-memory (a project folder), mem0 (a JSON export or OpenMemory zip),\n" +
			"chatgpt and claude (the data export zip or its folder), markdown (an Obsidian vault or any Markdown folder).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := runImport(cmd.Context(), g, opts, args)
			if err != nil {
				return err
			}
			if err := g.emit(out, func(w io.Writer) { printImport(g, w, out) }); err != nil {
				return err
			}
			if !out.Imported() && out.Unchanged == 0 && (out.Refused > 0 || len(out.Skipped) > 0) {
				return exitError{code: ExitRefused}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&opts.dryRun, "dry-run", false, "say what would come in, and write nothing")
	c.Flags().BoolVar(&opts.extract, "extract", false, "chatgpt, claude: ask your brain to propose facts from each conversation, as inbox lines for tidy (calls the model; see docs/IMPORTS.md)")
	return c
}

// runImport imports args[1] as the kind args[0] into the discovered box.
func runImport(ctx context.Context, g *Global, opts importOptions, args []string) (ImportOutput, error) {
	kind, path := args[0], g.abs(args[1])
	var skipped []imports.Skip
	bar := g.progress("reading")
	if bar == nil {
		bar = func(int, int) {}
	}
	src, err := imports.Open(kind, path, imports.Options{
		Zone:     time.Local,
		Skipped:  func(s imports.Skip) { skipped = append(skipped, s) },
		Progress: func(done, total int64) { bar(int(done>>10), int(total>>10)) },
	})
	if err != nil {
		return ImportOutput{}, err
	}
	if opts.extract && kind != imports.ChatGPT && kind != imports.Claude {
		return ImportOutput{}, errs.E("cli.import", errs.Usage, "--extract reads conversations: it works with chatgpt and claude, not %s.", kind)
	}
	var out ImportOutput
	run := g.write
	if opts.dryRun {
		run = g.read
	}
	err = run(ctx, func(a *app.App) error {
		in := memory.ImportInput{Kind: kind, Source: src.Name, Path: src.Path, Folder: src.Folder, DryRun: opts.dryRun, Read: src.Read}
		var used []usage.Line
		if opts.extract {
			if err := a.Brain.CanPropose(ctx); err != nil {
				return err
			}
			in.Extract = func(ctx context.Context, d imports.Doc) ([]imports.Line, error) {
				p, err := a.Brain.ProposeFacts(ctx, brain.ProposeInput{Title: d.Path, Text: string(d.Data)})
				used = append(used, p.Lines...)
				out.Read++
				if err != nil {
					return nil, err
				}
				lines := make([]imports.Line, 0, len(p.Facts))
				for _, f := range p.Facts {
					lines = append(lines, imports.Line{Text: f})
				}
				return lines, nil
			}
		}
		res, err := a.Memory.Import(ctx, owner(""), in)
		// What the brain was paid for is on the ledger, whether the import came in or not.
		for _, l := range used {
			out.Spent += l.Cost
		}
		if rerr := a.Brain.Record(ctx, owner(""), fmt.Sprintf("the brain read %d conversations of %s for facts", out.Read, src.Name), used); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			return err
		}
		res.Skipped = append(skipped, res.Skipped...)
		out.ImportResult, out.Path = res, path
		return nil
	})
	return out, err
}

func printImport(g *Global, w io.Writer, out ImportOutput) {
	_, _ = fmt.Fprintln(w, out.Text)
	if out.Read > 0 {
		_, _ = fmt.Fprintf(w, "The brain read %s for facts (%s).\n", say.Count(out.Read, "conversation"), usage.Dollars(out.Spent))
	}
	if out.DryRun {
		for _, s := range out.Sample {
			_, _ = fmt.Fprintf(w, "  %s\n", s)
		}
	}
	for _, p := range out.Places {
		g.note("box: left out: %s", p)
	}
	if out.Refused > len(out.Places) {
		g.note("box: … and %d more left out", out.Refused-len(out.Places))
	}
	for _, s := range out.Skipped {
		g.note("box: skipped %s: %s", s.Where, s.Why)
	}
}
