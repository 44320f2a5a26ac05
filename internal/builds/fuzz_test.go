package builds_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// FuzzProposePage: whatever an assistant sends, a proposal is either refused with "Not proposed: …"
// and no card, or a card whose action holds exactly the bytes sent and their fingerprint.
func FuzzProposePage(f *testing.F) {
	f.Add("Garden", "garden", "What I planted where.", "moc-home", garden(f))
	f.Add("", "garden", "x", "", "<p>x</p>")
	f.Add("G\u202e", "g", "x", "", "<p>x</p>")
	f.Add("G", "g--x", "x", "../x", `<img src="//cdn.example.com/a.png">`)
	f.Add("G", "g", "x", "people", "<script>new WebSocket('x')</script>")
	a := newApp(f)
	n := 0
	f.Fuzz(func(t *testing.T, name, own, what, read, html string) {
		n++
		ctx := context.Background()
		before, err := a.Gate.Waiting(ctx)
		if err != nil {
			t.Fatal(err)
		}
		asker := gate.Asker{Connection: "Fuzz", Via: "mcp", Conn: "k-fuzz-" + strings.Repeat("x", n%50)}
		p, err := a.Builds.ProposePage(ctx, builds.PageInput{Name: name, Own: own, What: what, Read: []string{read}, HTML: html}, asker)
		after, _ := a.Gate.Waiting(ctx)
		if err != nil {
			if !strings.HasPrefix(errs.Sentence(err), "Not proposed: ") || len(after) != len(before) {
				t.Fatalf("refusal %q made %d cards", errs.Sentence(err), len(after)-len(before))
			}
			return
		}
		pl, _ := p.Card.Action.Payload.(map[string]any)
		if pl["html"] != html || pl["sha256"] != builds.Sum([]byte(html)) || len(after) != len(before)+1 {
			t.Fatalf("the card does not hold the bytes sent: %+v", p.Card)
		}
	})
}

// FuzzDecodeBundle: a connector version's file either reads as a manifest and files that encode back
// to a file reading the same, or is refused as Invalid; never a panic.
func FuzzDecodeBundle(f *testing.F) {
	f.Add([]byte(`{"manifest":{"name":"Bus times"},"files":{"index.mjs":"export const tools = {};"}}`))
	f.Add([]byte(`{"manifest":{},"files":{}}`))
	f.Add([]byte(`{"manifest":null,"files":{"a":1}}`))
	f.Add([]byte(`{"manifest":{"name":"x"},"files":{"a.mjs":"<\u2028>"},"extra":1}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, files, err := builds.DecodeBundle(data)
		if err != nil {
			if !errs.Is(err, errs.Invalid) {
				t.Fatalf("not Invalid: %v", err)
			}
			return
		}
		var fs map[string]string
		if json.Unmarshal(files, &fs) != nil {
			return // files that are not text are the connector checks' to refuse
		}
		again, err := builds.EncodeBundle(m, fs)
		if err != nil {
			return // a manifest that is not JSON is refused when encoded
		}
		m2, files2, err := builds.DecodeBundle(again)
		if err != nil {
			t.Fatalf("an encoded bundle does not read back: %v\n%s", err, again)
		}
		var fs2 map[string]string
		if json.Unmarshal(files2, &fs2) != nil || len(fs2) != len(fs) || !json.Valid(m2) {
			t.Fatalf("read back differently: %s", again)
		}
		for k, v := range fs {
			if fs2[k] != v {
				t.Fatalf("file %q changed: %q → %q", k, v, fs2[k])
			}
		}
	})
}
