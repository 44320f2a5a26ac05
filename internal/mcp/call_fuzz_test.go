package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadCall: the direct path takes a body only when it is one plain tools/call, and then the name and
// arguments it reports are the ones a generic JSON reading of the same body finds. Seeds in
// testdata/fuzz/FuzzReadCall.
func FuzzReadCall(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_search","arguments":{"words":"leo"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		id, name, args, ok := ReadCall(body)
		if !ok {
			return
		}
		if !id.IsValid() {
			t.Fatalf("took %q with no id", body)
		}
		// The first JSON value of the body, as the SDK's stream decoder reads it, keys in their exact case.
		var msg map[string]any
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&msg); err != nil {
			t.Fatalf("took %q, which encoding/json refuses: %v", body, err)
		}
		params, _ := msg["params"].(map[string]any)
		if msg["method"] != "tools/call" || params["name"] != name {
			t.Fatalf("took %q as %q, json reads %v %v", body, name, msg["method"], params["name"])
		}
		if args != nil {
			var obj map[string]any
			if err := json.Unmarshal(args, &obj); err != nil {
				t.Fatalf("arguments %q are not an object: %v", args, err)
			}
		}
	})
}
