package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// buildsListOutput is the --json shape of box builds list.
type buildsListOutput struct {
	Builds   []builds.Summary `json:"builds"`
	SafeMode bool             `json:"safeMode"`
}

// buildOutput is the --json shape of box builds status, off, on, undo and remove.
type buildOutput struct {
	Build    builds.Build       `json:"build"`
	SafeMode bool               `json:"safeMode"`
	Card     *gate.ApprovalCard `json:"card,omitempty"` // remove: the Delete for good card of a page's notes or a connector's keys and data
	// LastTest (box builds status of a connector) is its last test run as only the owner sees it: the
	// failure in full and the end of its output.
	LastTest *connectors.TestReport `json:"lastTest,omitempty"`
	Text     string                 `json:"text"`
}

const safeModeOn = "Safe mode is on: every page, look, layout and connector is paused."

// safeModeOutput is the --json shape of box safe-mode.
type safeModeOutput struct {
	SafeMode bool   `json:"safeMode"`
	Text     string `json:"text"`
}

func buildsCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "builds", Short: "What was built for the box (pages, the look, the layout, connectors): list, status, off, on, undo, remove"}
	c.AddCommand(&cobra.Command{Use: "list", Short: "List every build with its kind, status and version", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBuildsList(cmd.Context(), g) }})
	c.AddCommand(&cobra.Command{Use: "status ID", Short: "One build: its versions, who asked for each, its status", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runBuildsStatus(cmd.Context(), g, args[0]) }})
	for _, verb := range []string{"off", "on"} {
		on := verb == "on"
		c.AddCommand(&cobra.Command{Use: verb + " ID", Short: "Switch a build " + verb, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error { return runBuildsOn(cmd.Context(), g, args[0], on) }})
	}
	c.AddCommand(&cobra.Command{Use: "undo ID [VERSION]", Short: "Go back to an earlier version (the one before, or VERSION); a connector's tests run again", Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return runBuildsUndo(cmd.Context(), g, args) }})
	c.AddCommand(&cobra.Command{Use: "remove ID", Short: "Remove a build (undo brings it back); a page's notes, a connector's keys and data wait on a Delete for good card", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runBuildsRemove(cmd.Context(), g, args[0]) }})
	return c
}

func safeModeCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:       "safe-mode on|off",
		Short:     "Pause every page, look, layout and connector at once (on), or bring them back (off)",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"on", "off"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "on" && args[0] != "off" {
				return errs.E("cli.safemode", errs.Usage, "box safe-mode takes on or off, not %q.", args[0])
			}
			return runSafeMode(cmd.Context(), g, args[0] == "on")
		},
	}
}

func runBuildsList(ctx context.Context, g *Global) error {
	return g.read(ctx, func(a *app.App) error {
		all, err := a.Builds.List(ctx)
		if err != nil {
			return err
		}
		out := buildsListOutput{Builds: []builds.Summary{}, SafeMode: a.Builds.SafeMode(ctx)}
		for _, b := range all {
			out.Builds = append(out.Builds, builds.Summarize(b))
		}
		return g.emit(out, func(w io.Writer) {
			if out.SafeMode {
				_, _ = fmt.Fprintln(w, safeModeOn)
			}
			if len(out.Builds) == 0 {
				g.note("box: nothing was built for this box yet")
			}
			for _, s := range out.Builds {
				_, _ = fmt.Fprintf(w, "%s:%s\t%s\t%s\tversion %d\t%s\n", s.Kind, s.ID, s.Name, s.Status, s.Version, s.Address)
			}
		})
	})
}

func (g *Global) printBuild(out buildOutput) error {
	return g.emit(out, func(w io.Writer) {
		b := out.Build
		if out.Text != "" {
			_, _ = fmt.Fprintln(w, out.Text)
		}
		_, _ = fmt.Fprintf(w, "%s:%s %s — %s, version %d\n", b.Kind, b.ID, b.Name, b.Status, b.Version)
		if e := b.Envelope; e != nil {
			hosts := "nowhere"
			if len(e.Hosts) > 0 {
				hosts = strings.Join(e.Hosts, ", ")
			}
			_, _ = fmt.Fprintf(w, "  reaches %s; %s\n", hosts, e.Access)
			for _, k := range e.Keys {
				_, _ = fmt.Fprintf(w, "  key %s, sent only to %s\n", k.Name, k.Host)
			}
		}
		if h := b.Health; h != nil {
			verdict := "passed"
			if !h.OK {
				verdict = "failed: " + h.Why
			}
			_, _ = fmt.Fprintf(w, "  tests of v%d %s, %s\n", h.Version, h.At.Format("2006-01-02 15:04"), verdict)
		}
		if t := out.LastTest; t != nil && !t.OK {
			if t.Detail != "" {
				_, _ = fmt.Fprintf(w, "  as the sandbox told it: %s\n", t.Detail)
			}
			if t.TestOutputTail != "" {
				_, _ = fmt.Fprintf(w, "  its output, the end:\n%s\n", indent(t.TestOutputTail))
			}
		}
		for _, v := range b.Versions {
			failed := ""
			switch {
			case v.Failed && b.Kind == builds.KindConnector:
				failed = " (failed its tests)"
			case v.Failed:
				failed = " (did not load cleanly)"
			}
			_, _ = fmt.Fprintf(w, "  v%d %s by %s, %s%s\n", v.N, v.At.Format("2006-01-02 15:04"), v.By.Who, v.Changelog, failed)
		}
	})
}

func runBuildsStatus(ctx context.Context, g *Global, id string) error {
	return g.read(ctx, func(a *app.App) error {
		b, err := a.Builds.Get(ctx, id)
		if err != nil {
			return err
		}
		out := buildOutput{Build: b, SafeMode: a.Builds.SafeMode(ctx)}
		if b.Kind == builds.KindConnector {
			switch t, err := a.Connectors.LastTest(b.ID); {
			case err == nil:
				out.LastTest = &t
			case !errs.Is(err, errs.NotFound):
				return err
			}
		}
		return g.printBuild(out)
	})
}

func runBuildsOn(ctx context.Context, g *Global, id string, on bool) error {
	return g.write(ctx, func(a *app.App) error {
		b, err := a.Builds.SetOn(ctx, owner(""), id, on)
		if err != nil {
			return err
		}
		return g.printBuild(buildOutput{Build: b, SafeMode: a.Builds.SafeMode(ctx), Text: fmt.Sprintf("%s is %s.", b.Name, b.Status)})
	})
}

func runBuildsUndo(ctx context.Context, g *Global, args []string) error {
	n := 0
	if len(args) == 2 {
		v, err := strconv.Atoi(args[1])
		if err != nil || v < 1 {
			return errs.E("cli.builds", errs.Usage, "VERSION is a version number like 2, not %q.", args[1])
		}
		n = v
	}
	return g.write(ctx, func(a *app.App) error {
		b, err := a.Builds.Undo(ctx, owner(""), args[0], n)
		if err != nil {
			return err
		}
		return g.printBuild(buildOutput{Build: b, SafeMode: a.Builds.SafeMode(ctx), Text: fmt.Sprintf("%s is back at version %d.", b.Name, b.Version)})
	})
}

func runBuildsRemove(ctx context.Context, g *Global, id string) error {
	return g.write(ctx, func(a *app.App) error {
		rm, err := a.Builds.Remove(ctx, owner(""), id, gate.Asker{Owner: true, Via: "cli"})
		if err != nil {
			return err
		}
		return g.printBuild(buildOutput{Build: rm.Build, SafeMode: a.Builds.SafeMode(ctx), Card: rm.Card, Text: rm.Text})
	})
}

// runSafeMode sets safe mode: at the command line the local owner may turn it off without a passkey
// (docs/GATE.md, the threat model).
func runSafeMode(ctx context.Context, g *Global, on bool) error {
	return g.write(ctx, func(a *app.App) error {
		if err := a.Builds.SetSafeMode(ctx, owner(""), on); err != nil {
			return err
		}
		out := safeModeOutput{SafeMode: on, Text: "Safe mode is off: pages, looks, the layout and connectors are back."}
		if on {
			out.Text = safeModeOn
		}
		return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
	})
}

// indent is text with each line indented four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
