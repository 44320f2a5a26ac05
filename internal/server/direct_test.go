package server_test

import (
	"context"
	"io"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcptest"
	"github.com/boxmem/box/internal/server"
)

// TestDirectCallAnswersAsTheSDK sends the same tools/calls to two servers of one box, one answering them
// directly and one only through the SDK's session, and wants the same status, headers and bytes from both:
// results, isError sentences, protocol errors, every checkbox refusal and a frozen box. Requests the direct
// path leaves to the SDK (a batch, _meta, another header) are answered alike too.
func TestDirectCallAnswersAsTheSDK(t *testing.T) {
	a, err := app.Init(context.Background(), t.TempDir(), nil, "true", app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var direct *server.Server
	d := serve(t, a, func(s *server.Server) { direct = s })
	viaSDK := serveAlso(t, a, server.ThroughSDK)
	_, writer := d.key("Writer", keys.Caps{Memory: true})
	_, reader := d.key("Reader", keys.Caps{})
	cs := d.mustConnect(writer)
	for _, f := range []string{"Leo swims on Thursdays & Sundays at the <Lido> pool.", "Mira's dentist is Dr. Ana Costa in Porto."} {
		if text, isErr := mcptest.Call(t, cs, "memory_remember", map[string]any{"text": f}); isErr {
			t.Fatalf("remember: %s", text)
		}
	}
	if text, isErr := mcptest.Call(t, cs, "todos_add", map[string]any{"text": "Book the dentist for Leo"}); isErr {
		t.Fatalf("todos_add: %s", text)
	}
	call := func(id, name, args string) string {
		p := `{"name":"` + name + `"`
		if args != "" {
			p += `,"arguments":` + args
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + p + `}}`
	}
	type req struct {
		key, body string
		headers   map[string]string
		toSDK     bool // the direct path leaves it to the SDK
	}
	reqs := []req{
		{writer, call("1", "memory_search", `{"words":"leo swim"}`), nil, false},
		{writer, call("2", "memory_search", `{"words":"lido"}`), nil, false},
		{writer, call("3", "memory_search", `{"words":"xylophone"}`), nil, false},
		{writer, call(`"abc"`, "memory_search", `{"words":"dentist","limit":1}`), nil, false},
		{writer, call(`"<a&b> \u2028 \"q\""`, "memory_search", `{"words":"lido"}`), nil, false},
		{writer, call("9007199254740993", "memory_search", `{"words":"dentist","kind":"note","trust":"outside","since":"2020-01-01"}`), nil, false},
		{writer, call("4", "memory_search", `{"words":5}`), nil, false},
		{writer, call("5", "memory_search", `{"words":"leo","limit":"x"}`), nil, false},
		{writer, call("6", "memory_search", `{"words":"leo","kind":"entity"}`), nil, false},
		{writer, call("7", "memory_search", `{"words":"leo","since":"Thursday"}`), nil, false},
		{writer, call("8", "memory_search", `{}`), nil, false},
		{writer, call("9", "memory_search", ""), nil, false},
		{writer, call("10", "memory_search", `{"Words":"leo"}`), nil, false},
		{writer, call("11", "memory_search", `{"words":"leo","colour":"red"}`), nil, false},
		{writer, call("12", "memory_overview", ""), nil, false},
		{writer, call("13", "memory_overview", `{}`), nil, false},
		{writer, call("14", "memory_read_note", `{"name":"entity-nobody"}`), nil, false},
		{writer, call("15", "memory_read_note", `{"name":"MEMORY","offset":-1}`), nil, false},
		{writer, call("16", "memory_recent", `{"limit":3}`), nil, false},
		{writer, call("17", "todos_list", `{}`), nil, false},
		{writer, call("18", "no_such_tool", `{}`), nil, false},
		{writer, call("19", "memory_remember", `{}`), nil, false},
		{writer, call("20", "memory_remember", `{"text":"my password is hunter2"}`), nil, false},
		{reader, call("21", "memory_remember", `{"text":"Leo likes chess."}`), nil, false},
		{reader, call("22", "todos_add", `{"text":"x"}`), nil, false},
		{reader, call("23", "memory_search", `{"words":"leo"}`), nil, false},
		{reader, call("24", "list_builds", `{}`), nil, false},
		{writer, call("25", "memory_search", `{"words":"leo"}`), map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, false},
		{writer, call("26", "memory_search", `{"words":"leo"}`), map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, false},
		{writer, `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"memory_search","arguments":{"words":"leo"}}}`, nil, false},
		{writer, `  {"id":35,"params":{"arguments":{"words":"leo"},"name":"memory_search"},"method":"tools/call","jsonrpc":"2.0"}`, nil, false},
		// Left to the SDK: what the direct path does not take.
		{writer, `{"jsonrpc":"1.0","id":36,"method":"tools/call","params":{"name":"memory_search","arguments":{"words":"leo"}}}`, nil, true},
		{writer, `{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"memory_search","arguments":{"words":"leo"}}}`, nil, true},
		{writer, `{"jsonrpc":"2.0","id":37,"method":"tools/list","params":{}}`, nil, true},
		{writer, call("27", "memory_search", `{"words":"leo"}`), map[string]string{"Mcp-Protocol-Version": "2099-01-01"}, true},
		{writer, call("28", "memory_search", `{"words":"leo"}`), map[string]string{"Accept": "application/json"}, true},
		{writer, call("29", "memory_search", `{"words":"leo"}`), map[string]string{"Content-Type": "text/plain"}, true},
		{writer, `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"memory_search","arguments":{"words":"leo"},"_meta":{"progressToken":1}}}`, nil, true},
		{writer, `[` + call("31", "memory_search", `{"words":"leo"}`) + `]`, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, true},
		{writer, call("32", "memory_search", `null`), nil, true},
		{writer, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"memory_search"}}`, nil, true},
		{writer, `{"jsonrpc":"2.0","id":33,"method":"tools/call"}`, nil, true},
		{writer, `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":7}}`, nil, true},
	}
	send := func(e *env, r req) (int, string, string) {
		h := map[string]string{"Authorization": "Bearer " + r.key, "Mcp-Protocol-Version": "2025-11-25"}
		for k, v := range r.headers {
			h[k] = v
		}
		resp := e.post(r.body, h)
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type") + " | " + resp.Header.Get("Cache-Control"), string(body)
	}
	check := func(r req) {
		t.Helper()
		before := server.Directs(direct)
		ds, dh, db := send(d, r)
		ss, sh, sb := send(viaSDK, r)
		if ds != ss || dh != sh || db != sb {
			t.Errorf("%s\n direct: %d %s %s\n    SDK: %d %s %s", r.body, ds, dh, db, ss, sh, sb)
		}
		if took := server.Directs(direct) > before; took == r.toSDK {
			t.Errorf("%s: answered directly %v", r.body, took)
		}
	}
	for _, r := range reqs {
		check(r)
	}
	if err := a.State.SetFrozen(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	check(reqs[0])
	check(reqs[21])
	if err := a.State.SetFrozen(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if server.Directs(direct) < 25 {
		t.Fatalf("only %d calls were answered directly", server.Directs(direct))
	}
}
