package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/routine"
	"github.com/boxmem/box/internal/say"
)

func routinesCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "routines", Short: "Scheduled prompts the brain runs with read-only tools; reports go to Today (docs/ROUTINES.md)"}
	c.AddCommand(routinesAddCmd(g), routinesListCmd(g), routinesRemoveCmd(g), routinesRunCmd(g),
		routinesSwitchCmd(g, true), routinesSwitchCmd(g, false))
	return c
}

type routinesAddOptions struct {
	at, days, prompt string
	off, starter     bool
}

func routinesAddCmd(g *Global) *cobra.Command {
	var o routinesAddOptions
	c := &cobra.Command{
		Use:   "add NAME --at HH:MM [--days mon,tue,…] --prompt TEXT [--off] | add NAME --starter",
		Short: "Add a routine (on unless --off); --starter adds a ready-made one, off until you turn it on",
		Long: "Add a routine: a prompt the brain runs at --at (your local time, HH:MM) on --days (mon,tue,wed,thu,fri,sat,sun;\n" +
			"default every day), with read-only tools; its report goes to Today and the diary, never into the memory.\n" +
			"--starter NAME adds a starter routine (morning-paper: today's to-dos, cautions, what changed yesterday), off;\n" +
			"--at and --days change its time.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRoutinesAdd(cmd.Context(), g, o, args[0]) },
	}
	c.Flags().StringVar(&o.at, "at", "", "the time of day, HH:MM on a 24-hour clock (your local time)")
	c.Flags().StringVar(&o.days, "days", "", "the days it runs, like mon,wed,fri (default: every day)")
	c.Flags().StringVar(&o.prompt, "prompt", "", "what the routine asks the brain")
	c.Flags().BoolVar(&o.off, "off", false, "add it turned off")
	c.Flags().BoolVar(&o.starter, "starter", false, "add the starter routine of that name (morning-paper)")
	return c
}

func runRoutinesAdd(ctx context.Context, g *Global, o routinesAddOptions, name string) error {
	r := routine.Routine{Name: name, At: o.at, Prompt: o.prompt, On: !o.off}
	if o.starter {
		s, ok := routine.Starter(name)
		if !ok {
			return usageErr("there is no starter routine %q; the starters are %s", name, starterNames())
		}
		if o.prompt != "" {
			return usageErr("--starter comes with its own prompt; leave --prompt out, or add your own routine without --starter")
		}
		r = s
		if o.at != "" {
			r.At = o.at
		}
	} else if o.at == "" || strings.TrimSpace(o.prompt) == "" {
		return usageErr("box routines add needs --at and --prompt (box routines add evening --at 21:00 --prompt \"What did I do today?\"), or --starter")
	}
	if o.days != "" || !o.starter {
		days, err := routine.ParseDays(o.days)
		if err != nil {
			return err
		}
		r.Days = days
	}
	return g.write(ctx, func(a *app.App) error {
		added, err := a.Routines.Add(ctx, cliOwner, r)
		if err != nil {
			return err
		}
		return g.emit(added, func(w io.Writer) {
			state := "on"
			if !added.On {
				state = "off (turn it on with box routines on " + added.Name + ")"
			}
			_, _ = fmt.Fprintf(w, "Added the routine %s: %s, %s.\n", added.Name, added.When(), state)
		})
	})
}

func starterNames() string {
	var out []string
	for _, s := range routine.Starters() {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

// routinesList is box routines list --json: the routines, and the starters not added yet.
type routinesList struct {
	Routines []routine.Routine `json:"routines"`
	Starters []routine.Routine `json:"starters"`
}

func routinesListCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the routines (time, days, on or off, prompt) and the starters not added yet",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.read(cmd.Context(), func(a *app.App) error {
				rs, err := a.Routines.List(cmd.Context())
				if err != nil {
					return err
				}
				out := routinesList{Routines: rs, Starters: []routine.Routine{}}
				for _, s := range routine.Starters() {
					if !hasRoutine(rs, s.Name) {
						out.Starters = append(out.Starters, s)
					}
				}
				return g.emit(out, func(w io.Writer) { printRoutines(w, out) })
			})
		},
	}
}

func hasRoutine(rs []routine.Routine, name string) bool {
	for _, r := range rs {
		if r.Name == name {
			return true
		}
	}
	return false
}

func printRoutines(w io.Writer, l routinesList) {
	if len(l.Routines) == 0 {
		_, _ = fmt.Fprintln(w, "No routines yet. Add one with box routines add NAME --at HH:MM --prompt TEXT.")
	}
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, r := range l.Routines {
		if r.Problem != "" {
			_, _ = fmt.Fprintf(tw, "%s\tbroken\t\t%s\n", r.Name, r.Problem)
			continue
		}
		state := "on"
		if !r.On {
			state = "off"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.When(), state, oneLineCut(r.Prompt, 60))
	}
	_ = tw.Flush()
	for _, s := range l.Starters {
		_, _ = fmt.Fprintf(w, "Starter offered: %s (%s): box routines add %s --starter\n", s.Name, oneLineCut(s.Prompt, 50), s.Name)
	}
}

func oneLineCut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func routinesRemoveCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a routine (undo brings it back; its reports stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.write(cmd.Context(), func(a *app.App) error {
				if err := a.Routines.Remove(cmd.Context(), cliOwner, args[0]); err != nil {
					return err
				}
				return g.emit(map[string]string{"removed": args[0]}, func(w io.Writer) {
					_, _ = fmt.Fprintf(w, "Removed the routine %s.\n", args[0])
				})
			})
		},
	}
}

func routinesSwitchCmd(g *Global, on bool) *cobra.Command {
	word := map[bool]string{true: "on", false: "off"}[on]
	return &cobra.Command{
		Use:   word + " NAME",
		Short: "Turn a routine " + word,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.write(cmd.Context(), func(a *app.App) error {
				r, err := a.Routines.SetOn(cmd.Context(), cliOwner, args[0], on)
				if err != nil {
					return err
				}
				return g.emit(r, func(w io.Writer) {
					_, _ = fmt.Fprintf(w, "The routine %s is %s (%s).\n", r.Name, word, r.When())
				})
			})
		},
	}
}

func routinesRunCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "run NAME",
		Short: "Run a routine now (on or off); its report goes to Today and the diary",
		Long: "Run a routine now with the brain and read-only tools. The report is printed, kept under\n" +
			"_bookkeeping/routines/ for Today and written to the diary with its cost. Without a brain: exit 5. A provider\n" +
			"failure is the report's sentence and exit 4 (refused key, no credit, rate limit) or 7 (down, timeout).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.read(ctx, func(a *app.App) error {
				if err := a.Writable(ctx); err != nil {
					return err
				}
				rep, err := a.Routines.Run(ctx, args[0])
				if rep.Path == "" && err != nil {
					return err
				}
				if werr := g.emit(rep, func(w io.Writer) {
					_, _ = fmt.Fprintln(w, rep.Text)
					model := rep.Model
					if model == "" {
						model = "no model called"
					}
					g.note("routine %s · %s · %s · %s", rep.Routine, model, say.Count(rep.Calls, "call"), reportCost(rep))
				}); werr != nil {
					return werr
				}
				if err != nil {
					return exitError{code: exitCode(errs.Wrap("cli.routines", errs.KindOf(err), err, ""))}
				}
				return nil
			})
		},
	}
}

func reportCost(rep routine.Report) string {
	if !rep.CostKnown {
		return "cost unknown"
	}
	return fmt.Sprintf("$%.4f", rep.Cost)
}
