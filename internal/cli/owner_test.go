package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
)

// propose makes cards from an assistant, as MCP does, through the composition root.
func propose(t *testing.T, root string, actions ...gate.Action) {
	t.Helper()
	a, err := app.Open(context.Background(), root, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	}()
	for _, act := range actions {
		out, err := a.Gate.Propose(context.Background(), act, gate.Asker{Connection: "Claude", Via: "mcp", Conn: "k_claude"})
		if err != nil || out.Card == nil {
			t.Fatalf("propose: %+v %v", out, err)
		}
	}
}

// The owner's verbs for what the web UI decides: cards, switches, freeze, to-dos, each with --json, and
// every write refused (exit 7) while the box is frozen.
func TestOwnerVerbs(t *testing.T) {
	root := initBox(t)
	propose(t, root, memory.RememberAction("Leo swims on Thursdays."), memory.RememberAction("Ana paints."), keys.Action("Cursor", keys.Caps{Memory: true}))

	var list cardsListOutput
	decode(t, mem(t, root, ExitOK, "cards", "list"), &list)
	if len(list.Cards) != 3 || list.Cards[0].ProposedBy.Who != "Claude" || list.Cards[0].ProposedBy.Conn != "k_claude" {
		t.Fatalf("cards list: %+v", list)
	}
	card := map[string]string{} // by what it asks (the three were made in the same second: their order is not)
	for _, c := range list.Cards {
		card[c.Summary] = c.ID
	}
	leo, ana, cursor := card["Leo swims on Thursdays."], card["Ana paints."], card[keys.Action("Cursor", keys.Caps{Memory: true}).Summary]
	var done cardDecision
	decode(t, mem(t, root, ExitOK, "cards", "approve", leo), &done)
	if done.Status != "approved" || !strings.Contains(done.Text, "Saved to the inbox") {
		t.Fatalf("approve: %+v", done)
	}
	if h, _ := mem(t, root, ExitOK, "search", "leo", "swims")["hits"].([]any); len(h) != 1 {
		t.Fatalf("the approved fact is not found: %v", h)
	}
	mem(t, root, ExitNotFound, "cards", "approve", leo) // decided already
	decode(t, mem(t, root, ExitOK, "cards", "decline", ana, "--note", "not this one"), &done)
	if done.Status != "declined" {
		t.Fatalf("decline: %+v", done)
	}
	decode(t, mem(t, root, ExitOK, "cards", "approve", cursor), &done)
	if !strings.HasPrefix(done.Secret, keys.Prefix) {
		t.Fatalf("an access card approved at the CLI shows the key once: %+v", done)
	}
	diary := runCLI(t, run{args: []string{"diary", "--n", "6", "--json"}, cwd: root}).stdout
	if !strings.Contains(diary, `"op": "approve"`) || !strings.Contains(diary, `"via": "cli"`) || !strings.Contains(diary, "The owner said yes at the command line.") {
		t.Errorf("the diary does not record the owner's yes at the CLI:\n%s", diary)
	}

	var sw switchesOutput
	decode(t, mem(t, root, ExitOK, "switches", "access", "Never"), &sw)
	if sw.Entry == "" || sw.Switches[3].Name != "access" || sw.Switches[3].Value != "never" {
		t.Fatalf("switches access never: %+v", sw)
	}
	mem(t, root, ExitRefused, "keys", "new", "--name", "Claude Code") // access at Never refuses a key, in the diary
	if d := runCLI(t, run{args: []string{"diary", "--n", "1", "--json"}, cwd: root}).stdout; !strings.Contains(d, `"op": "refuse"`) || !strings.Contains(d, "a key for Claude Code") {
		t.Errorf("the refused key is not in the diary:\n%s", d)
	}
	mem(t, root, ExitRefused, "switches", "access", "just-do-it") // access has no Just do it
	mem(t, root, ExitUsage, "switches", "nothing", "never")

	var item struct {
		ID   string `json:"id"`
		Done bool   `json:"done"`
	}
	decode(t, mem(t, root, ExitOK, "todo", "add", "--list", "shopping", "Buy", "milk"), &item)
	var todos todoListOutput
	decode(t, mem(t, root, ExitOK, "todo", "list"), &todos)
	if len(todos.Lists) != 1 || todos.Lists[0].Items[0].ID != item.ID {
		t.Fatalf("todo list: %+v", todos)
	}
	decode(t, mem(t, root, ExitOK, "todo", "done", item.ID), &item)
	if !item.Done {
		t.Fatalf("todo done: %+v", item)
	}

	// "Change my box" at Never: the owner's own memory and to-do writes at the CLI are refused as MCP's
	// are, each with a diary line; reading goes on.
	mem(t, root, ExitOK, "switches", "change", "never")
	for _, args := range [][]string{{"remember", "Mia sings."}, {"todo", "add", "x"}, {"todo", "done", item.ID}, {"forget", "leo"}} {
		if got := mem(t, root, ExitRefused, args...); !strings.Contains(got["error"].(map[string]any)["message"].(string), "Never") {
			t.Errorf("%v at Never: %v", args, got)
		}
		if d := runCLI(t, run{args: []string{"diary", "--n", "1", "--json"}, cwd: root}).stdout; !strings.Contains(d, `"op": "refuse"`) || !strings.Contains(d, "box "+args[0]) {
			t.Errorf("%v at Never is not in the diary:\n%s", args, d)
		}
	}
	mem(t, root, ExitOK, "search", "leo")
	mem(t, root, ExitOK, "switches", "change", "just-do-it")
	mem(t, root, ExitOK, "switches", "access", "ask-me")
	var key struct {
		ID string `json:"id"`
	}
	decode(t, mem(t, root, ExitOK, "keys", "new", "--name", "Leaky", "--memory"), &key)

	var fr freezeOutput
	decode(t, mem(t, root, ExitOK, "freeze"), &fr)
	if !fr.Frozen || fr.Entry == "" {
		t.Fatalf("freeze: %+v", fr)
	}
	for _, args := range [][]string{{"remember", "Mia sings."}, {"todo", "add", "x"}, {"switches", "send", "never"}, {"forget", "leo"}, {"undo"}, {"tidy"}} {
		if got := mem(t, root, ExitBusy, args...); got["error"].(map[string]any)["kind"] != "frozen" {
			t.Errorf("%v while frozen: %v", args, got)
		}
	}
	mem(t, root, ExitOK, "search", "leo") // the owner still reads their own box
	// Revoking a key is a protective act, like freeze: a leaked key is why one freezes.
	if got := mem(t, root, ExitOK, "keys", "revoke", key.ID); got["id"] != key.ID {
		t.Errorf("keys revoke while frozen: %v", got)
	}
	if d := runCLI(t, run{args: []string{"diary", "--n", "1", "--json"}, cwd: root}).stdout; !strings.Contains(d, `"op": "revoke"`) || !strings.Contains(d, "Leaky") {
		t.Errorf("the revoke is not in the diary:\n%s", d)
	}
	decode(t, mem(t, root, ExitOK, "unfreeze"), &fr)
	if fr.Frozen {
		t.Fatalf("unfreeze: %+v", fr)
	}
	mem(t, root, ExitOK, "remember", "Mia sings.")
}

// decode turns a verb's --json answer (as mem decoded it) into its typed shape.
func decode(t *testing.T, m map[string]any, v any) {
	t.Helper()
	raw, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}
