package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/mcptest"
)

// clockConnector is a connector whose tools reach no site, so the real binary's sandbox can run its
// tests here (the test-only network is refused outside a test binary); answer is what its tool returns.
func clockConnector(name, answer string) map[string]any {
	return map[string]any{
		"manifest": map[string]any{"name": name, "what": "Which city the owner's clock is set to.",
			"tools": []any{map[string]any{"name": "city", "description": "The clock's city", "effect": "read",
				"inputSchema": map[string]any{"type": "object"}}},
			"test": []any{map[string]any{"tool": "city", "expect": map[string]any{"contains": "Vienna"}}}},
		"files": map[string]any{"index.mjs": `export const tools = { city: async (args, ctx) => { ctx.log("asked for the city"); return ` + answer + `; } };`},
	}
}

// A connector proposed over `box mcp` (a real MCP client on the real binary's stdio) and approved with
// `box cards approve`: the command waits for its tests, which run in the binary's own sandbox child, and
// prints how they ended; `box builds status --json` shows the status and health. A connector whose test
// fails ends failed, with why.
func TestConnectorProposedOverMCPApprovedAtTheCLI(t *testing.T) {
	ctx := context.Background()
	root := initBox(t)
	cmd := exec.Command(boxBin, "mcp")
	cmd.Env = append(os.Environ(), "BOX_DIR="+root)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "Codex", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out, isErr := mcptest.Call(t, cs, "validate_build", clockConnector("Clock city", `"Vienna"`))
	if isErr || !strings.Contains(out, `"ok":true`) || !strings.Contains(out, `"boxCanBuild":true`) {
		t.Fatalf("validate_build: %v %s", isErr, out)
	}
	proposals := map[string]string{}
	for name, answer := range map[string]string{"Clock city": `"Vienna"`, "Wrong city": `"Graz"`} {
		proposals[name] = mcptest.Propose(t, cs, "propose_connector", clockConnector(name, answer))
	}

	approve := func(id string) cardDecision {
		t.Helper()
		out, err := exec.Command(boxBin, "--box", root, "--json", "cards", "approve", id).Output()
		var d cardDecision
		if err != nil || json.Unmarshal(out, &d) != nil {
			t.Fatalf("box cards approve %s: %v %s", id, err, out)
		}
		return d
	}
	d := approve(proposals["Clock city"])
	if d.Card.Title != "Add a connector: Clock city" || d.Card.ProposedBy.Who != "Codex" || d.Build == nil || d.Build.Status != builds.StatusOn ||
		!strings.Contains(d.Text, "its tests passed, so it is on") {
		t.Fatalf("approve: %+v", d)
	}
	d = approve(proposals["Wrong city"])
	if d.Build == nil || d.Build.Status != builds.StatusFailed || d.Build.Health == nil || !strings.Contains(d.Build.Health.Why, "Vienna") ||
		!strings.Contains(d.Text, "its tests failed") {
		t.Fatalf("approve the failing one: %+v", d)
	}

	out2, err := exec.Command(boxBin, "--box", root, "--json", "builds", "status", "wrong-city").Output()
	var st buildOutput
	if err != nil || json.Unmarshal(out2, &st) != nil || st.Build.Kind != builds.KindConnector || st.Build.Status != builds.StatusFailed || st.Build.Health == nil ||
		st.LastTest == nil || !strings.Contains(st.LastTest.TestOutputTail, "asked for the city") {
		t.Fatalf("builds status: %v %s", err, out2)
	}
	out2, err = exec.Command(boxBin, "--box", root, "builds", "list").Output()
	if err != nil || !strings.Contains(string(out2), "connector:clock-city\tClock city\ton") || !strings.Contains(string(out2), "connector:wrong-city\tWrong city\tfailed") {
		t.Fatalf("builds list: %v\n%s", err, out2)
	}
	log, _ := exec.Command("git", "-C", root, "log", "--format=%s").Output()
	if !strings.Contains(string(log), "The connector Clock city passed its tests: version 1 is on") || !strings.Contains(string(log), "The connector Wrong city failed its tests") {
		t.Errorf("the diary does not say how the tests ended:\n%s", log)
	}
}
