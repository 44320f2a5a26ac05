package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/boxmem/box/internal/memory"
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

// FuzzSortedJSON: for JSON as encoding/json writes a Go value (compact, HTML escaped, an object's keys in
// any order), sortedJSON gives, when it takes it, byte for byte what decoding and marshalling it again
// gives (the SDK's way with an output), and it takes every object that holds no null, long integer or
// escaped key.
func FuzzSortedJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[{"z":"<x> & \u2028","y":1.5e-7}],"c":{"e":true,"d":false}}`, `{"n":null}`,
		`{"big":123456789012345678}`, `{"k\"":1}`, `[1,2]`, `{"s":"é \ud83d\ude00 \\ \n"}`, `{"hits":[],"x":{}}`} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, order uint8) {
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		data := writeUnsorted(v, order)
		got, ok := sortedJSON(data)
		var back any
		if err := decode(data, &back); err != nil {
			if ok {
				t.Fatalf("took %s, which does not decode: %v", data, err)
			}
			return
		}
		want, _ := json.Marshal(back)
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("%s: got %s, want %s", data, got, want)
		}
		if !ok && data[0] == '{' && !holds(back, func(v any) bool { return v == nil || longInteger(v) || escapedKey(v) }) {
			t.Fatalf("refused %s", data)
		}
	})
}

// writeUnsorted writes v as encoding/json writes a struct: compact, HTML escaped, with each object's keys
// in an order order picks (reversed, or rotated).
func writeUnsorted(v any, order uint8) []byte {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if order%2 == 1 {
			slices.Reverse(keys)
		} else if len(keys) > 0 {
			r := int(order) % len(keys)
			keys = append(keys[r:], keys[:r]...)
		}
		b := []byte{'{'}
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(k)
			b = append(append(append(b, kb...), ':'), writeUnsorted(v[k], order/2)...)
		}
		return append(b, '}')
	case []any:
		b := []byte{'['}
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, writeUnsorted(e, order)...)
		}
		return append(b, ']')
	}
	b, _ := json.Marshal(v)
	return b
}

// holds reports whether v or a value within it is one that is.
func holds(v any, is func(any) bool) bool {
	if is(v) {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if holds(e, is) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if holds(e, is) {
				return true
			}
		}
	}
	return false
}

// longInteger reports whether v is a whole number encoding/json writes with more than 15 digits.
func longInteger(v any) bool {
	f, ok := v.(float64)
	b, _ := json.Marshal(f)
	return ok && math.Abs(f) >= 1e15 && !bytes.ContainsAny(b, ".eE")
}

// escapedKey reports whether v is an object with a key that JSON writes with an escape.
func escapedKey(v any) bool {
	m, _ := v.(map[string]any)
	for k := range m {
		if b, _ := json.Marshal(k); bytes.IndexByte(b, '\\') >= 0 {
			return true
		}
	}
	return false
}

// TestSortedJSONRefusesInvalidUTF8: a string that held invalid UTF-8 (a hand-edited Latin-1 note read
// whole) is written by encoding/json as \ufffd, and by the SDK's way, decoded and marshalled again, as
// the raw character: the fast path must leave it to the SDK's way, and a text that says \ufffd in so
// many letters is not such a string.
func TestSortedJSONRefusesInvalidUTF8(t *testing.T) {
	for text, want := range map[string]bool{"caf\xe9 <b>": false, `the escape \ufffd, typed`: true, "café": true} {
		data, err := json.Marshal(struct {
			Text string `json:"text"`
		}{text})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := sortedJSON(data)
		if ok != want {
			t.Errorf("%s: taken %v, want %v", data, ok, want)
			continue
		}
		var back any
		if err := decode(data, &back); err != nil {
			t.Fatal(err)
		}
		if sdk, _ := json.Marshal(back); ok && !bytes.Equal(got, sdk) {
			t.Errorf("%s: %s, the SDK's way %s", data, got, sdk)
		}
	}
}

// TestPlainType: the answers the fast path takes are the box's plain output types; a type whose encoding
// might not fit its inferred schema, or not as the SDK's way writes it, is left to the SDK's way.
func TestPlainType(t *testing.T) {
	type inner struct{ A string }
	type (
		embeddedPtr struct {
			*inner
			B int
		}
		raw      struct{ R json.RawMessage }
		iface    struct{ V any }
		asString struct {
			N int `json:"n,string"`
		}
		byteSlice struct{ B []byte }
		intKeys   struct{ M map[int]string }
		named     struct {
			inner `json:"inner"`
		}
		clash struct {
			S string `json:"A"`
			inner
		}
	)
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[memory.SearchResult](): true, reflect.TypeFor[readOut](): true, reflect.TypeFor[memory.Overview](): true,
		reflect.TypeFor[recentOut](): true, reflect.TypeFor[todosListOut](): true, reflect.TypeFor[*todoOut](): true,
		reflect.TypeFor[embeddedPtr](): false, reflect.TypeFor[raw](): false, reflect.TypeFor[iface](): false,
		reflect.TypeFor[asString](): false, reflect.TypeFor[byteSlice](): false, reflect.TypeFor[intKeys](): false,
		reflect.TypeFor[named](): false, reflect.TypeFor[clash](): false,
	} {
		if got := plainType(typ); got != want {
			t.Errorf("plainType(%v) = %v, want %v", typ, got, want)
		}
	}
}
