package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/connectortest"
)

// connectorBox is a box with the seed's Bus times connector sent by Claude and approved by the owner,
// whose connectors reach the city's API (a local server mapped in as api.example.com) from the real
// box binary's sandbox child; base are the options every command of the test opens the box with.
func connectorBox(t *testing.T, api *connectortest.BusAPI) (string, app.Options) {
	t.Helper()
	site := connectortest.NewSite(t, api, connectortest.BusHost)
	t.Cleanup(func() {
		if d := site.Dials(); len(d) > 0 {
			t.Errorf("connections were attempted to %v", d)
		}
	})
	root := initBox(t)
	base := app.Options{ConnectorNet: site.Net, ConnectorExe: boxBin, VaultDir: filepath.Join(t.TempDir(), "vault")}
	a, err := app.Open(context.Background(), root, base)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	connectortest.Install(t, a.Builds, a.Gate, a.Connectors.CheckOptions(context.Background()), connectortest.BusManifest, connectortest.BusFiles())
	return root, base
}

// runWith runs the CLI in-process with the composition root's options to start from.
func runWith(base app.Options, root, stdin string, args ...string) ran {
	var out, errb bytes.Buffer
	code := mainWith(append([]string{"--box", root}, args...), IO{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Cwd: root}, base)
	return ran{out.String(), errb.String(), code}
}

// box connectors key, list and call: a key read from stdin (never an argument, never shown again but
// for its last four), the connector switched on, its read tool called with --args and its value
// printed; a write tool waits on a card, and Never refuses it (exit 4); every refusal exits as
// docs/CLI.md says. The key appears in no output and nowhere in the box.
func TestConnectorsVerbs(t *testing.T) {
	const key = "city-KEY-cli-3e8d90f1a7b6"
	api := &connectortest.BusAPI{Key: key}
	root, base := connectorBox(t, api)
	var all []ran
	box := func(code int, stdin string, args ...string) ran {
		t.Helper()
		got := runWith(base, root, stdin, args...)
		all = append(all, got)
		if got.code != code {
			t.Fatalf("box %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got.code, code, got.stdout, got.stderr)
		}
		return got
	}

	var list connectorsListOutput
	decodeJSON(t, box(ExitOK, "", "--json", "connectors", "list").stdout, &list)
	if len(list.Connectors) != 1 || list.Connectors[0].Status != builds.StatusFailed || len(list.Connectors[0].Keys) != 1 || list.Connectors[0].Keys[0].Set ||
		len(list.Connectors[0].Tools) != 2 || list.Connectors[0].Tools[0].Chat != "c_bus-times__next_buses" {
		t.Fatalf("list: %+v", list)
	}
	box(ExitUsage, "", "connectors", "key", "bus-times", "API_KEY")
	box(ExitUsage, "", "connectors", "key", "bus-times", "API_KEY", "--stdin")
	box(ExitNotFound, key, "connectors", "key", "bus-times", "NOPE", "--stdin")
	box(ExitNotFound, key, "connectors", "key", "trains", "API_KEY", "--stdin")
	box(ExitRefused, "a-key\twith-a-tab", "connectors", "key", "bus-times", "API_KEY", "--stdin")
	var k connectorKeyOutput
	decodeJSON(t, box(ExitOK, key+"\n", "--json", "connectors", "key", "bus-times", "API_KEY", "--stdin").stdout, &k)
	if !k.Key.Set || k.Key.Last4 != "…a7b6" || !strings.Contains(k.Text, "never shown again") {
		t.Fatalf("key: %+v", k)
	}
	box(ExitRefused, "", "connectors", "call", "bus-times", "next_buses", "--args", `{"stop": "12"}`)
	box(ExitOK, "", "builds", "on", "bus-times")

	var ans connectors.Answer
	decodeJSON(t, box(ExitOK, "", "--json", "connectors", "call", "bus-times", "next_buses", "--args", `{"stop": "12"}`).stdout, &ans)
	var compact bytes.Buffer
	_ = json.Compact(&compact, ans.Value)
	if ans.Connector != "bus-times" || !strings.Contains(compact.String(), `"buses":[{"line":"4","in":"3 min"}`) || len(ans.Hosts) != 1 || ans.Hosts[0] != connectortest.BusHost {
		t.Fatalf("call --json: %+v", ans)
	}
	human := box(ExitOK, "", "connectors", "call", "bus-times", "next_buses", "--args", `{"stop": "12"}`)
	if !strings.HasPrefix(human.stdout, "{\n  \"stop\": \"12\",") || !strings.Contains(human.stdout, `"calls": 2`) || !strings.Contains(human.stderr, "reached api.example.com") {
		t.Fatalf("call: %q %q", human.stdout, human.stderr)
	}
	box(ExitUsage, "", "connectors", "call", "bus-times", "next_buses", "--args", `stop=12`)
	box(ExitUsage, "", "connectors", "call", "bus-times", "next_buses", "--args", `[1]`)
	box(ExitRefused, "", "connectors", "call", "bus-times", "next_buses", "--args", `{"stop": 12}`)
	box(ExitNotFound, "", "connectors", "call", "bus-times", "leave")
	box(ExitNotFound, "", "connectors", "call", "trains", "next")
	box(ExitFailure, "", "connectors", "call", "bus-times", "next_buses", "--args", `{"stop": "99"}`)

	var wait connectors.Answer
	decodeJSON(t, box(ExitOK, "", "--json", "connectors", "call", "bus-times", "report_delay", "--args", `{"line": "4"}`).stdout, &wait)
	if wait.Card == "" || wait.Value != nil || len(api.Reports()) != 0 {
		t.Fatalf("a write at Ask me: %+v %v", wait, api.Reports())
	}
	// The card lists every argument whole beneath its title (docs/SECURITY.md).
	if got := box(ExitOK, "", "cards", "list").stdout; !strings.Contains(got, wait.Card+"  Send as you: Bus times → report_delay") || !strings.Contains(got, "\n    line: 4\n") {
		t.Fatalf("box cards list:\n%s", got)
	}
	box(ExitOK, "", "cards", "approve", wait.Card)
	if r := api.Reports(); len(r) != 1 || r[0] != "4" {
		t.Fatalf("the city heard %v", r)
	}
	box(ExitOK, "", "switches", "send", "never")
	if got := box(ExitRefused, "", "connectors", "call", "bus-times", "report_delay", "--args", `{"line": "5"}`); !strings.Contains(got.stderr, `"Send as me" is set to Never`) {
		t.Fatalf("at Never: %q", got.stderr)
	}
	box(ExitOK, "", "builds", "off", "bus-times")
	box(ExitRefused, "", "connectors", "call", "bus-times", "next_buses", "--args", `{"stop": "12"}`)
	box(ExitOK, "", "builds", "on", "bus-times")
	box(ExitOK, "", "freeze")
	box(ExitBusy, "", "connectors", "call", "bus-times", "next_buses", "--args", `{"stop": "12"}`)
	box(ExitBusy, key, "connectors", "key", "bus-times", "API_KEY", "--stdin")
	box(ExitOK, "", "unfreeze")

	for _, r := range all {
		if strings.Contains(r.stdout+r.stderr, key) {
			t.Fatalf("the key was printed: %q %q", r.stdout, r.stderr)
		}
	}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(key)) {
				t.Errorf("the key is in %s", p)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("git", "-C", root, "log", "--all", "-p").Output(); bytes.Contains(out, []byte(key)) {
		t.Fatal("the key is in git's history")
	}
}

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
}
