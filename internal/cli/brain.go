package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/usage"
)

// cliOwner is the owner at the command line.
var cliOwner = box.Actor{Who: "owner", Via: "cli", Trust: "own"}

func brainCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "brain", Short: "Set, check and budget the brain: the model that thinks for the box (docs/BRAIN.md)"}
	c.AddCommand(brainSetCmd(g), brainStatusCmd(g), brainOffCmd(g), brainBudgetCmd(g), brainModelsCmd(g))
	return c
}

type brainSetOptions struct {
	in       brain.SetInput
	keyStdin bool
}

func brainSetCmd(g *Global) *cobra.Command {
	var o brainSetOptions
	c := &cobra.Command{
		Use:   "set --provider openai|anthropic|claude-code|codex [--base-url URL] --model M [--fast-model M] [--key-stdin]",
		Short: "Set the brain; a key (read from stdin) is checked with the provider before it is sealed in the vault",
		Long: "Set the brain. openai is any OpenAI-compatible server (OpenAI, OpenRouter, Venice, llama.cpp, Ollama, vLLM:\n" +
			"give --base-url); anthropic is the Anthropic Messages API. The key is read from stdin (--key-stdin), checked\n" +
			"with the provider, sealed in the vault outside the box and never shown again; without --key-stdin the key\n" +
			"already sealed for that provider is kept. claude-code and codex think on your own subscription: the CLI is\n" +
			"installed at its pinned version when missing and, in a terminal, signed in.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBrainSet(cmd.Context(), g, o) },
	}
	c.Flags().StringVar(&o.in.Provider, "provider", "", "openai, anthropic, claude-code or codex")
	c.Flags().StringVar(&o.in.BaseURL, "base-url", "", "the provider's address (openai and anthropic); empty is the vendor's own")
	c.Flags().StringVar(&o.in.Model, "model", "", "the main model, from the provider's list (box brain models)")
	c.Flags().StringVar(&o.in.FastModel, "fast-model", "", "the fast model that answers everyday turns")
	c.Flags().BoolVar(&o.keyStdin, "key-stdin", false, "read the key from stdin (one line)")
	return c
}

func runBrainSet(ctx context.Context, g *Global, o brainSetOptions) error {
	if o.in.Provider == "" || o.in.Model == "" {
		return usageErr("box brain set needs --provider and --model (box brain set --provider anthropic --model claude-sonnet-4-5 --key-stdin)")
	}
	if o.keyStdin {
		data, err := io.ReadAll(io.LimitReader(g.IO.In, 64<<10))
		if err != nil {
			return usageErr("the key could not be read from stdin: %v", err)
		}
		o.in.Key = strings.TrimSpace(string(data))
		if o.in.Key == "" {
			return usageErr("--key-stdin read nothing: pipe the key in (box brain set … --key-stdin < keyfile)")
		}
	}
	return g.write(ctx, func(a *app.App) error {
		if o.in.Provider == brain.ClaudeCode || o.in.Provider == brain.Codex {
			if err := g.prepareSubscription(ctx, a, o.in.Provider); err != nil {
				return err
			}
		}
		st, err := a.Brain.Set(ctx, cliOwner, o.in)
		if err != nil {
			return err
		}
		return g.emit(st, func(w io.Writer) { printBrainStatus(w, st) })
	})
}

// prepareSubscription installs the CLI at its pinned version when it is missing and, in a terminal,
// runs its own sign-in with the terminal attached.
func (g *Global) prepareSubscription(ctx context.Context, a *app.App, kind string) error {
	sub, err := a.Brain.Subscription(kind)
	if err != nil {
		return err
	}
	if sub.Installed() != sub.Version() {
		g.note("installing %s %s for the box (about 20 s)…", sub.Package(), sub.Version())
		if err := sub.Install(ctx, provider.InstallOptions{Output: g.IO.Err}); err != nil {
			return err
		}
	}
	in, ok := g.IO.In.(*os.File)
	if st, err := sub.Status(ctx); err == nil && st.SignedIn || !ok || !term.IsTerminal(int(in.Fd())) {
		return nil // signed in, or no terminal to sign in with: Set's check says which
	}
	cmd, err := sub.SignInCommand(ctx)
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, g.IO.Err, g.IO.Err
	g.note("signing %s in to your subscription: follow the link it shows", sub.Name())
	if err := cmd.Run(); err != nil {
		return usageErr("%s did not sign in (%v); run box brain set again to retry", sub.Name(), err)
	}
	return nil
}

func brainStatusCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "The brain: provider, models, whose key (its last four characters only), this month's usage and budget",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.read(cmd.Context(), func(a *app.App) error {
				st, err := a.Brain.Status(cmd.Context())
				if err != nil {
					return err
				}
				return g.emit(st, func(w io.Writer) { printBrainStatus(w, st) })
			})
		},
	}
}

func printBrainStatus(w io.Writer, st brain.Status) {
	if !st.On {
		_, _ = fmt.Fprintln(w, "No brain is set: the chat answers from your memory by search. Set one with box brain set.")
		return
	}
	s := st.Settings
	_, _ = fmt.Fprintf(w, "brain: %s, model %s", st.Name, s.Model)
	if s.FastModel != "" {
		_, _ = fmt.Fprintf(w, " (fast: %s)", s.FastModel)
	}
	_, _ = fmt.Fprintln(w)
	if st.Key != "" {
		_, _ = fmt.Fprintln(w, "key: "+st.Key)
	}
	_, _ = fmt.Fprintln(w, st.Where)
	m := st.Month
	atLeast := ""
	if m.AtLeast {
		atLeast = "at least "
	}
	budget := "no budget"
	if s.Budget > 0 {
		budget = "budget " + usage.Dollars(s.Budget)
	}
	estimate := ""
	if m.Estimated > 0 {
		estimate = ", and " + usage.Dollars(m.Estimated) + " by the subscription's own estimate, not billed"
	}
	_, _ = fmt.Fprintf(w, "%s: %s%s spent (%s%s), %d calls, %d tokens in, %d out\n", m.Month, atLeast, usage.Dollars(m.Cost), budget, estimate, m.Calls, m.TokensIn, m.TokensOut)
	if st.Sentence != "" {
		_, _ = fmt.Fprintln(w, st.Sentence)
	}
}

func brainOffCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "off",
		Short: "Turn the brain off: its settings go and its key is removed from the vault",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.write(cmd.Context(), func(a *app.App) error {
				if err := a.Brain.Off(cmd.Context(), cliOwner); err != nil {
					return err
				}
				return g.emit(map[string]bool{"on": false}, func(w io.Writer) {
					_, _ = fmt.Fprintln(w, "The brain is off; its key is removed. The chat answers from your memory by search.")
				})
			})
		},
	}
}

func brainBudgetCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "budget USD",
		Short: "Set the monthly budget in US dollars (0: none); at 100% the main model steps down to the fast one",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			usd, err := brain.ParseBudget(args[0])
			if err != nil {
				return usageErr("%s", err)
			}
			return g.write(cmd.Context(), func(a *app.App) error {
				st, err := a.Brain.SetBudget(cmd.Context(), cliOwner, usd)
				if err != nil {
					return err
				}
				return g.emit(st, func(w io.Writer) { printBrainStatus(w, st) })
			})
		},
	}
}

// brainModelsOutput is the --json shape of box brain models.
type brainModelsOutput struct {
	Models []brainModel `json:"models"`
}

type brainModel struct {
	ID            string          `json:"id"`
	Name          string          `json:"name,omitempty"`
	ContextTokens int             `json:"contextTokens,omitempty"`
	Price         *provider.Price `json:"price,omitempty"`
}

func brainModelsCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "The models of the brain's provider, from its own list",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.read(cmd.Context(), func(a *app.App) error {
				ms, err := a.Brain.Models(cmd.Context())
				if err != nil {
					return err
				}
				out := brainModelsOutput{Models: []brainModel{}}
				for _, m := range ms {
					out.Models = append(out.Models, brainModel{ID: m.ID, Name: m.Name, ContextTokens: m.ContextTokens, Price: m.Price})
				}
				return g.emit(out, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					_, _ = fmt.Fprintln(tw, "ID\tNAME\t$/M IN\t$/M OUT")
					for _, m := range out.Models {
						in, outp := "", ""
						if m.Price != nil {
							in, outp = strconv.FormatFloat(m.Price.In, 'f', -1, 64), strconv.FormatFloat(m.Price.Out, 'f', -1, 64)
						}
						_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.ID, m.Name, in, outp)
					}
					_ = tw.Flush()
				})
			})
		},
	}
}
