package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// connectorsListOutput is the --json shape of box connectors list.
type connectorsListOutput struct {
	Connectors []connectorOutput `json:"connectors"`
	SafeMode   bool              `json:"safeMode"`
}

// connectorOutput is one installed connector: its status, tools (with the chat's name for each) and
// keys (set or not; never a key).
type connectorOutput struct {
	ID      string                 `json:"id"`
	Name    string                 `json:"name"`
	Emoji   string                 `json:"emoji,omitempty"`
	Status  string                 `json:"status"`
	Version int                    `json:"version"`
	Tools   []connectorToolOutput  `json:"tools"`
	Keys    []connectors.KeyStatus `json:"keys"`
	Problem string                 `json:"problem,omitempty"` // its bundle cannot be read
}

type connectorToolOutput struct {
	Name   string `json:"name"`
	Effect string `json:"effect"`
	Chat   string `json:"chat"` // c_<id>__<tool>
}

// connectorKeyOutput is the --json shape of box connectors key.
type connectorKeyOutput struct {
	Connector string               `json:"connector"`
	Key       connectors.KeyStatus `json:"key"`
	Text      string               `json:"text"`
}

func connectorsCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "connectors", Short: "The connectors installed in the box: list them, set their keys, call their tools (docs/CONNECTORS.md)"}
	c.AddCommand(&cobra.Command{Use: "list", Short: "Every installed connector: its status, its tools and whether each key is set", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runConnectorsList(cmd.Context(), g) }})
	var stdin bool
	key := &cobra.Command{
		Use:   "key ID NAME --stdin",
		Short: "Seal a connector's key in the vault, read from stdin (never an argument, never shown again)",
		Long: "Seal the key NAME that the connector ID declares in the vault outside the box. The key is read from stdin\n" +
			"(typed without echo at a terminal, or piped in); it never appears in the box, git, the diary or any output:\n" +
			"only its last four characters are shown.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConnectorsKey(cmd.Context(), g, args[0], args[1], stdin)
		},
	}
	key.Flags().BoolVar(&stdin, "stdin", false, "read the key from stdin (required)")
	c.AddCommand(key)
	var argsJSON string
	call := &cobra.Command{
		Use:   "call ID TOOL [--args JSON]",
		Short: "Call a tool of a connector that is on, as the owner; a write tool follows \"Send as me\"",
		Long: "Call TOOL of the connector ID with --args (a JSON object; default {}). The value the tool returns is printed\n" +
			"as JSON on stdout; the hosts it reached are in the diary. A tool that writes (acts as you) follows \"Send as me\"\n" +
			"(\"Share outside my box\" for a connector that may reach any website): Never refuses it, Ask me makes a card that\n" +
			"box cards approve runs.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConnectorsCall(cmd.Context(), g, args[0], args[1], argsJSON)
		},
	}
	call.Flags().StringVar(&argsJSON, "args", "{}", "the tool's arguments, a JSON object")
	c.AddCommand(call)
	return c
}

func runConnectorsList(ctx context.Context, g *Global) error {
	return g.read(ctx, func(a *app.App) error {
		all, err := a.Builds.Connectors(ctx)
		if err != nil {
			return err
		}
		out := connectorsListOutput{Connectors: []connectorOutput{}, SafeMode: a.Builds.SafeMode(ctx)}
		for _, b := range all {
			out.Connectors = append(out.Connectors, describeConnector(ctx, a, b))
		}
		return g.emit(out, func(w io.Writer) {
			if out.SafeMode {
				_, _ = fmt.Fprintln(w, "Safe mode is on: every connector is paused.")
			}
			if len(out.Connectors) == 0 {
				g.note("box: no connector is installed in this box")
			}
			for _, c := range out.Connectors {
				_, _ = fmt.Fprintf(w, "%s\t%s %s\t%s\tversion %d\n", c.ID, c.Emoji, c.Name, c.Status, c.Version)
				for _, t := range c.Tools {
					_, _ = fmt.Fprintf(w, "  %s (%s)\n", t.Name, t.Effect)
				}
				for _, k := range c.Keys {
					state := "not set: box connectors key " + c.ID + " " + k.Name + " --stdin"
					if k.Set {
						state = "set (" + k.Last4 + ")"
					}
					_, _ = fmt.Fprintf(w, "  key %s for %s: %s\n", k.Name, k.Host, state)
				}
				if c.Problem != "" {
					_, _ = fmt.Fprintf(w, "  %s\n", c.Problem)
				}
			}
		})
	})
}

func describeConnector(ctx context.Context, a *app.App, b builds.Build) connectorOutput {
	c := connectorOutput{ID: b.ID, Name: b.Name, Emoji: b.Emoji, Status: b.Status, Version: b.Version, Tools: []connectorToolOutput{}, Keys: []connectors.KeyStatus{}}
	bundle, err := a.Builds.Bundle(b, b.Version)
	if err != nil {
		c.Problem = errs.Sentence(err)
		return c
	}
	for _, t := range bundle.Manifest.Tools {
		c.Tools = append(c.Tools, connectorToolOutput{Name: t.Name, Effect: t.Effect, Chat: connectors.ToolName(b.ID, t.Name)})
	}
	if keys, err := a.Connectors.Keys(ctx, b.ID); err == nil {
		c.Keys = keys
	}
	return c
}

func runConnectorsKey(ctx context.Context, g *Global, id, name string, stdin bool) error {
	if !stdin {
		return usageErr("box connectors key reads the key from stdin: add --stdin and pipe or type it (a key on the command line would stay in your shell's history)")
	}
	key, err := g.readSecret("the key " + name)
	if err != nil {
		return err
	}
	return g.write(ctx, func(a *app.App) error {
		k, err := a.Connectors.SetKey(ctx, cliOwner, id, name, key)
		if err != nil {
			return err
		}
		out := connectorKeyOutput{Connector: id, Key: k, Text: fmt.Sprintf("The key %s is sealed in the vault (%s); it is never shown again.", k.Name, k.Last4)}
		return g.emit(out, func(w io.Writer) { _, _ = fmt.Fprintln(w, out.Text) })
	})
}

// readSecret reads one secret from stdin: typed without echo at a terminal, else the piped text.
func (g *Global) readSecret(what string) (string, error) {
	if f, ok := g.IO.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		g.note("Paste %s (it is not shown), then press Enter:", what)
		b, err := term.ReadPassword(int(f.Fd()))
		if err != nil {
			return "", usageErr("%s could not be read from the terminal: %v", what, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	data, err := io.ReadAll(io.LimitReader(g.IO.In, connectors.MaxKey+1))
	if err != nil {
		return "", usageErr("%s could not be read from stdin: %v", what, err)
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", usageErr("--stdin read nothing: pipe %s in (box connectors key ID NAME --stdin < keyfile)", what)
	}
	return s, nil
}

func runConnectorsCall(ctx context.Context, g *Global, id, tool, argsJSON string) error {
	args := json.RawMessage(strings.TrimSpace(argsJSON))
	var obj map[string]any
	if dec := json.NewDecoder(bytes.NewReader(args)); dec.Decode(&obj) != nil || obj == nil || dec.More() {
		return usageErr("--args is a JSON object, like --args '{\"stop\": \"12\"}'")
	}
	return g.write(ctx, func(a *app.App) error {
		ans, err := a.Connectors.Call(ctx, connectors.Caller{Actor: cliOwner, Asker: gate.Asker{Owner: true, Via: "cli"}}, id, tool, args)
		if err != nil {
			return err
		}
		return g.emit(ans, func(w io.Writer) {
			if ans.Card != "" {
				_, _ = fmt.Fprintln(w, ans.Text)
				g.note("box: nothing ran yet; box cards approve %s runs it", ans.Card)
				return
			}
			var pretty bytes.Buffer
			if json.Indent(&pretty, ans.Value, "", "  ") != nil {
				pretty.Write(ans.Value)
			}
			_, _ = fmt.Fprintln(w, pretty.String())
			reached := "no host"
			if len(ans.Hosts) > 0 {
				reached = strings.Join(ans.Hosts, ", ")
			}
			g.note("box: %s reached %s in %d ms", id, reached, ans.ElapsedMs)
			for _, b := range ans.Blocked {
				g.note("box: refused %s: %s", b.Host, b.Why)
			}
		})
	})
}
