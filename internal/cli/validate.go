package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/ref"
	"github.com/boxmem/box/internal/say"
	"github.com/boxmem/box/internal/validate"
)

// validateOpts are the flags of box validate.
type validateOpts struct {
	all, staged, hook, preCommit, links, urls, canonical, fix bool
	urlsSince                                                 string
}

func validateCmd(g *Global) *cobra.Command {
	var o validateOpts
	c := &cobra.Command{
		Use:   "validate [PATH…]",
		Short: "Check cards: the named files, the whole box, the staged files, or an agent's edit",
		Long: "Check cards against the layout, their schemas and their refs. With no path and no mode, the whole box (--all).\n" +
			"Modes (one at a time): --all, --staged, --hook (an agent's PostToolUse JSON on stdin), --pre-commit (the git hook),\n" +
			"--links (broken refs box-wide), --urls [--urls-since REV] (external links, the only pass that uses the network),\n" +
			"--canonical [--fix] (relative refs and their /-form, whole box only).\n" +
			"Output: one finding per line, path:line: severity: message (code), then a summary on stderr.\n" +
			"Exit: 1 when there are errors, 0 otherwise; --hook exits 2 on errors (the agent's blocking code).",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(cmd.Context(), g, o, args)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.all, "all", false, "the whole box (the default with no paths)")
	f.BoolVar(&o.staged, "staged", false, "the cards as staged in git (the index, not the working tree)")
	f.BoolVar(&o.hook, "hook", false, "read an agent's PostToolUse hook JSON on stdin and check the edited card")
	f.BoolVar(&o.preCommit, "pre-commit", false, "the git pre-commit suite: staged cards, refs a delete or rename leaves dangling, big unlisted files")
	f.BoolVar(&o.links, "links", false, "every ref in the box; broken ones are warnings")
	f.BoolVar(&o.urls, "urls", false, "check external http(s) links (network; warnings only)")
	f.StringVar(&o.urlsSince, "urls-since", "", "with --urls: only links new in files changed since this git revision")
	f.BoolVar(&o.canonical, "canonical", false, "report relative refs and their /-form rewrite (whole box)")
	f.BoolVar(&o.fix, "fix", false, "with --canonical: rewrite the refs whose target exists")
	return c
}

// clash returns the usage error for the first incompatible flag combination, or nil.
func (o validateOpts) clash(args []string, asJSON bool) error {
	modes := []struct {
		on   bool
		name string
	}{
		{o.all, "--all"}, {o.staged, "--staged"}, {o.hook, "--hook"}, {o.preCommit, "--pre-commit"},
		{o.links, "--links"}, {o.urls, "--urls"}, {o.canonical, "--canonical"},
	}
	var on []string
	for _, m := range modes {
		if m.on {
			on = append(on, m.name)
		}
	}
	switch {
	case o.fix && !o.canonical:
		return usageErr("--fix works only with --canonical")
	case o.urlsSince != "" && !o.urls:
		return usageErr("--urls-since works only with --urls")
	case len(on) > 1 && o.canonical:
		return usageErr("--canonical cannot be combined with %s: the canonical pass is whole-box only", otherThan(on, "--canonical"))
	case len(on) > 1:
		return usageErr("%s cannot be combined: choose one mode", strings.Join(on, " and "))
	case len(args) > 0 && o.canonical:
		return usageErr("--canonical cannot be combined with paths: the canonical pass is whole-box only")
	case len(args) > 0 && len(on) == 1:
		return usageErr("%s cannot be combined with paths: name files without a mode, or drop the paths", on[0])
	case o.hook && asJSON:
		return usageErr("--hook cannot be combined with --json: the hook answers in the agent's own JSON")
	}
	return nil
}

func otherThan(ss []string, not string) string {
	var out []string
	for _, s := range ss {
		if s != not {
			out = append(out, s)
		}
	}
	return strings.Join(out, " and ")
}

func runValidate(ctx context.Context, g *Global, o validateOpts, args []string) error {
	if err := o.clash(args, g.JSON); err != nil {
		return err
	}
	if o.hook {
		return runHook(ctx, g)
	}
	return g.read(ctx, func(a *app.App) error { return validateWith(ctx, g, a, o, args) })
}

// validateWith runs the chosen mode with the box's one validator.
func validateWith(ctx context.Context, g *Global, a *app.App, o validateOpts, args []string) error {
	v := a.Validator
	if o.canonical {
		var b *box.Box
		if o.fix {
			if err := a.Writable(ctx); err != nil {
				return err
			}
			b = a.Box
		}
		rep, err := v.Canonical(ctx, b)
		if err != nil {
			return err
		}
		return printCanonical(g, rep, o.fix)
	}
	var res validate.Result
	var err error
	switch {
	case o.staged:
		res, err = v.Staged(ctx)
	case o.preCommit:
		res, err = v.PreCommit(ctx)
	case o.links:
		res, err = v.Links(ctx)
	case o.urls:
		res, err = v.URLs(ctx, o.urlsSince)
	case len(args) > 0:
		res, err = v.Files(ctx, g.IO.Cwd, args)
	default:
		res, err = v.All(ctx)
	}
	if err != nil {
		return err
	}
	if o.preCommit && !g.JSON {
		if len(res.Findings) == 0 {
			return nil // silent when clean
		}
		printFindings(g, g.IO.Err, res)
		if res.HasErrors() {
			g.note("box: the commit is refused; fix the errors above (or commit with --no-verify to skip the check)")
			return exitError{ExitFailure}
		}
		return nil
	}
	if g.JSON {
		if err := g.writeJSON(res); err != nil {
			return err
		}
	} else {
		printFindings(g, g.IO.Out, res)
	}
	if res.HasErrors() {
		return exitError{ExitFailure}
	}
	return nil
}

// printFindings writes one finding per line on w, then the summary on stderr.
func printFindings(g *Global, w io.Writer, res validate.Result) {
	for _, f := range res.Findings {
		_, _ = fmt.Fprintln(w, f.String())
	}
	g.note("%s, %s in %s", say.Count(res.Errors, "error"), say.Count(res.Warnings, "warning"), say.Count(res.Files, "file"))
}

func printCanonical(g *Global, rep ref.Report, fix bool) error {
	if g.JSON {
		return g.writeJSON(rep)
	}
	for _, it := range rep.Items {
		loc := it.Path
		if it.Line > 0 {
			loc = fmt.Sprintf("%s:%d", it.Path, it.Line)
		}
		switch it.Action {
		case ref.Rewrite:
			_, _ = fmt.Fprintf(g.IO.Out, "%s: %s → %s\n", loc, it.From, it.To)
		case ref.Repair:
			_, _ = fmt.Fprintf(g.IO.Out, "%s: %s → %s (repairs dangling ref)\n", loc, it.From, it.To)
		default:
			why := it.Reason
			if why == "" {
				why = string(it.Action)
			}
			_, _ = fmt.Fprintf(g.IO.Out, "%s: %s left as is: %s\n", loc, it.From, why)
		}
	}
	verb, files := "would rewrite", "files would change"
	if fix {
		verb, files = "rewrote", "files changed"
	}
	g.note("%s %d refs and %d links, repaired %d refs and %d links; %d ambiguous, %d skipped; %d %s",
		verb, rep.RefsRewritten, rep.LinksRewritten, rep.RefsRepaired, rep.LinksRepaired, rep.Ambiguous, rep.Skipped, rep.FilesChanged, files)
	return nil
}

// hookOutput is the Claude Code / Codex PostToolUse answer that adds context without blocking.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// runHook answers an agent's PostToolUse hook: silent when clean or not ours, warnings as context
// (exit 0), errors on stderr with exit 2 (the edit stands; the pre-commit hook blocks the commit).
func runHook(ctx context.Context, g *Global) error {
	data, err := io.ReadAll(io.LimitReader(g.IO.In, 16<<20))
	if err != nil {
		return errs.Wrap("validate.hook", errs.Other, err, "cannot read the hook input")
	}
	p, err := validate.ParseHook(data, g.IO.Cwd)
	if err != nil {
		return err
	}
	res, err := validate.Hook(ctx, p, box.Find)
	if err != nil {
		return err
	}
	switch {
	case res.HasErrors():
		for _, f := range res.Findings {
			g.note("%s", f.String())
		}
		g.note("Fix the errors above in the file you just edited; the commit will be refused until then.")
		return exitError{ExitUsage}
	case len(res.Findings) > 0:
		var out hookOutput
		out.HookSpecificOutput.HookEventName = "PostToolUse"
		out.HookSpecificOutput.AdditionalContext = validate.HookContext(res.Findings)
		enc := json.NewEncoder(g.IO.Out)
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	return nil
}
