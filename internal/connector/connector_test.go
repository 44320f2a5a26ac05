package connector

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// args reads a testdata file holding {"manifest": …, "files": …}, as a client sends them.
func args(t testing.TB, name string) (manifest, files []byte) {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var a struct{ Manifest, Files json.RawMessage }
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	return a.Manifest, a.Files
}

func TestBusTimesValidates(t *testing.T) {
	m, f := args(t, "bus-times.json")
	b, rep := Validate(m, f, Options{BoxCanBuild: true})
	if !rep.OK || len(rep.Problems) != 0 || !rep.BoxCanBuild {
		t.Fatalf("report = %+v", rep)
	}
	got := b.Manifest
	if got.ID != "bus-times" || got.API != 1 || got.Kind != "connector" || got.Runtime != "node-tool" || got.Entry != "index.mjs" {
		t.Errorf("defaults: %+v", got)
	}
	if got.Limits != (Limits{TimeoutS: 10, Memory: DefaultMemoryMB}) || got.Emoji != "🚌" {
		t.Errorf("limits/emoji: %+v %q", got.Limits, got.Emoji)
	}
	if !strings.Contains(b.Script, "var "+GlobalName+" =") || !strings.Contains(b.Script, "next_buses") {
		t.Errorf("script does not set %s:\n%s", GlobalName, b.Script)
	}
	if b.Envelope.Access != Read || !slices.Equal(b.Envelope.Hosts, []string{"api.example.com"}) || len(b.EnvelopeHash) != 64 || len(b.FilesSHA256) != 64 {
		t.Errorf("envelope %+v hash %q files %q", b.Envelope, b.EnvelopeHash, b.FilesSHA256)
	}
	if err := b.CheckArgs("next_buses", json.RawMessage(`{"stop": "12"}`)); err != nil {
		t.Error(err)
	}
	if err := b.CheckArgs("next_buses", json.RawMessage(`{"stop": 12}`)); err == nil {
		t.Error("a number where the schema wants text was let through")
	}
	if err := b.CheckArgs("next_trains", nil); err == nil || !strings.Contains(err.Error(), "next_buses") {
		t.Errorf("unknown tool: %v", err)
	}
	// The report's JSON shape is what validate_build answers.
	raw, _ := json.Marshal(rep)
	if string(raw) != `{"ok":true,"boxCanBuild":true,"problems":[]}` {
		t.Errorf("report JSON = %s", raw)
	}
}

// set returns the bus-times manifest with top-level fields replaced (or removed for a nil value):
// set(t, "egress", []string{…}, "test", nil).
func set(t *testing.T, kv ...any) []byte {
	t.Helper()
	m, _ := args(t, "bus-times.json")
	var o map[string]any
	json.Unmarshal(m, &o)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(o, kv[i].(string))
		} else {
			o[kv[i].(string)] = kv[i+1]
		}
	}
	out, _ := json.Marshal(o)
	return out
}

func TestValidateRefuses(t *testing.T) {
	_, files := args(t, "bus-times.json")
	tool := func(extra map[string]any) []any {
		t := map[string]any{"name": "next_buses", "description": "d", "effect": "read",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"stop": map[string]any{"type": "string"}}}}
		for k, v := range extra {
			t[k] = v
		}
		return []any{t}
	}
	cases := []struct {
		name, field string
		value       any
		where, why  string
	}{
		{"loopback host", "egress", []string{"127.0.0.1"}, "manifest.egress[0]", "127.0.0.1, a loopback address"},
		{"metadata address", "egress", []string{"169.254.169.254"}, "manifest.egress[0]", "cloud metadata"},
		{"private host", "egress", []string{"10.1.2.3"}, "manifest.egress[0]", "10.1.2.3, a private network address"},
		{"ipv6 loopback", "egress", []string{"[::1]"}, "manifest.egress[0]", "::1, a loopback address"},
		{"localhost", "egress", []string{"localhost"}, "manifest.egress[0]", `"localhost" is not a full domain name`},
		{"sub.localhost", "egress", []string{"api.localhost"}, "manifest.egress[0]", `"api.localhost" is the machine itself`},
		{"metadata name", "egress", []string{"metadata.google.internal"}, "manifest.egress[0]", "a cloud metadata service"},
		{"url not host", "egress", []string{"https://api.example.com/v1"}, "manifest.egress[0]", `give the host only: "api.example.com"`},
		{"port", "egress", []string{"api.example.com:8443"}, "manifest.egress[0]", "names a port"},
		{"star tld", "egress", []string{"*.com"}, "manifest.egress[0]", "whole top-level domain"},
		{"star middle", "egress", []string{"api.*.com"}, "manifest.egress[0]", "wildcards are written *.example.com"},
		{"star with others", "egress", []string{"*", "api.example.com"}, "manifest.egress[0]", "list nothing beside it"},
		{"eleven hosts", "egress", []string{"a.example.com", "b.example.com", "c.example.com", "d.example.com", "e.example.com", "f.example.com", "g.example.com", "h.example.com", "i.example.com", "j.example.com", "k.example.com"}, "manifest.egress", "has 11 entries; at most 10"},
		{"twice", "egress", []string{"api.example.com", "API.example.com."}, "manifest.egress[1]", "listed twice"},
		{"unknown key", "color", "blue", "manifest.color", `"color" is not a field here`},
		{"proposedBy", "proposedBy", map[string]any{"client": "me"}, "manifest.proposedBy", "the box's to set"},
		{"sha256", "sha256", "abc", "manifest.sha256", "the box's to set"},
		{"envelopeHash", "envelopeHash", "abc", "manifest.envelopeHash", "the box's to set"},
		{"api 2", "api", 2, "manifest.api", "can only be 1"},
		{"kind page", "kind", "page", "manifest.kind", "can only be connector"},
		{"runtime", "runtime", "python", "manifest.runtime", "can only be node-tool"},
		{"no name", "name", nil, "manifest.name", "is missing"},
		{"name bidi", "name", "Bus \u202etimes", "manifest.name", "U+202E"},
		{"bad id", "id", "Bus_Times", "manifest.id", "is not an id"},
		{"no tools", "tools", []any{}, "manifest.tools", "at least one tool"},
		{"tool unknown key", "tools", tool(map[string]any{"scope": "x"}), "manifest.tools[0].scope", `"scope" is not a field here`},
		{"tool bad effect", "tools", tool(map[string]any{"effect": "delete"}), "manifest.tools[0].effect", `"read" or "write"`},
		{"tool schema not object", "tools", tool(map[string]any{"inputSchema": map[string]any{"type": "string"}}), "manifest.tools[0].inputSchema", `"type": "object"`},
		{"tool schema remote ref", "tools", tool(map[string]any{"inputSchema": map[string]any{"type": "object", "$ref": "https://example.com/s.json"}}), "manifest.tools[0].inputSchema", "not a usable JSON Schema"},
		{"timeout", "limits", map[string]any{"timeoutS": 600}, "manifest.limits.timeoutS", "from 1 to 60"},
		{"memory", "limits", map[string]any{"memory": "64MB"}, "manifest.limits.memory", "whole number"},
		{"limits unknown", "limits", map[string]any{"cpu": 1}, "manifest.limits.cpu", "not a field here"},
		{"test unknown tool", "test", []any{map[string]any{"tool": "nope", "expect": "ok"}}, "manifest.test[0].tool", `"nope" is not one of the tools`},
		{"test bad args", "test", []any{map[string]any{"tool": "next_buses", "args": map[string]any{"stop": 12}, "expect": "ok"}}, "manifest.test[0].args", "inputSchema"},
		{"test bad expect", "test", []any{map[string]any{"tool": "next_buses", "args": map[string]any{"stop": "1"}, "expect": "lots"}}, "manifest.test[0].expect", `"lots"`},
		{"no test", "test", nil, "manifest.test", "at least one test"},
		{"credential elsewhere", "credentials", []any{map[string]any{"name": "TOKEN", "host": "evil.example.net"}}, "manifest.credentials[0].host", `"evil.example.net", which egress does not list`},
		{"credential pattern", "credentials", []any{map[string]any{"name": "TOKEN", "host": "*.example.com"}}, "manifest.credentials[0].host", "exactly one host"},
		{"credential bad name", "credentials", []any{map[string]any{"name": "my key", "host": "api.example.com"}}, "manifest.credentials[0].name", "not a key name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, rep := Validate(set(t, c.field, c.value), files, Options{})
			if rep.OK || b != nil {
				t.Fatalf("accepted: %+v", rep)
			}
			if !slices.ContainsFunc(rep.Problems, func(p Problem) bool { return p.Where == c.where && strings.Contains(p.Why, c.why) }) {
				t.Fatalf("want a problem at %s with %q; got %+v", c.where, c.why, rep.Problems)
			}
		})
	}
}

func TestValidateReportsEverythingAtOnce(t *testing.T) {
	manifest := `{"name": "", "egress": ["127.0.0.1", "10.0.0.1", "ok.example.com"], "tools": [{"name": "X"}], "proposedBy": {}, "extra": 1}`
	files := `{"index.mjs": "export const tools = {};", "../escape.mjs": "x", "big.txt": "y"}`
	_, rep := Validate([]byte(manifest), []byte(files), Options{BoxCanBuild: true})
	wheres := []string{}
	for _, p := range rep.Problems {
		wheres = append(wheres, p.Where)
	}
	for _, w := range []string{"manifest.name", "manifest.what", "manifest.egress[0]", "manifest.egress[1]", "manifest.tools[0].name",
		"manifest.tools[0].description", "manifest.tools[0].effect", "manifest.tools[0].inputSchema", "manifest.proposedBy", "manifest.extra",
		"files/../escape.mjs", "files/big.txt"} {
		if !slices.Contains(wheres, w) {
			t.Errorf("no problem at %s; got %v", w, wheres)
		}
	}
	if rep.OK || !rep.BoxCanBuild {
		t.Errorf("report %+v", rep)
	}
}

func TestValidateFiles(t *testing.T) {
	m, _ := args(t, "bus-times.json")
	cases := []struct{ name, files, where, why string }{
		{"not json", `{`, "files", "not valid JSON"},
		{"duplicate", `{"index.mjs": "a", "index.mjs": "b"}`, "files", `"index.mjs" is written twice`},
		{"duplicate among many", manyFiles(40, "f3.mjs"), "files", `"f3.mjs" is written twice`},
		{"no entry", `{"lib.mjs": "export const x = 1"}`, "files", "has no index.mjs"},
		{"syntax error", `{"index.mjs": "export const tools = {\n  next_buses: async ( => 1 };"}`, "files/index.mjs:2:", ""},
		{"imports a package", `{"index.mjs": "import fs from 'fs'; export const tools = {};"}`, "files/index.mjs:1:", `"fs" is not a file of the bundle`},
		{"imports node", `{"index.mjs": "import {x} from 'node:child_process'; export const tools = {};"}`, "files/index.mjs:1:", "never packages, Node built-ins or URLs"},
		{"imports url", `{"index.mjs": "import x from 'https://cdn.example.com/x.mjs'; export const tools = {};"}`, "files/index.mjs:1:", "not a file of the bundle"},
		{"requires", `{"index.mjs": "const fs = require('fs'); export const tools = {};"}`, "files/index.mjs:1:", `"fs" is not a file of the bundle`},
		{"dynamic import", `{"index.mjs": "export const tools = { a: async () => import('fs') };"}`, "files/index.mjs:1:", `"fs" is not a file of the bundle`},
		{"escape import", `{"index.mjs": "import x from '../etc/passwd.js'; export const tools = {};"}`, "files/index.mjs:1:", "not a file of the bundle"},
		{"no tools export", `{"index.mjs": "export const tool = {};"}`, "files/index.mjs", "exports no tools"},
		{"undeclared key", `{"index.mjs": "export const tools = { next_buses: async () => '{{key:SECRET}}' };"}`, "files/index.mjs", "declare no key \"SECRET\""},
		{"too big", `{"index.mjs": "export const tools = {};", "b.mjs": "` + strings.Repeat("x", MaxBundleBytes) + `"}`, "files", "at most 1024 KB in all"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rep := Validate(m, []byte(c.files), Options{})
			if rep.OK {
				t.Fatal("accepted")
			}
			if !slices.ContainsFunc(rep.Problems, func(p Problem) bool { return strings.HasPrefix(p.Where, c.where) && strings.Contains(p.Why, c.why) }) {
				t.Fatalf("want a problem at %s with %q; got %+v", c.where, c.why, rep.Problems)
			}
		})
	}
}

// manyFiles is a files object of n small files, and then again a file named again.
func manyFiles(n int, again string) string {
	var b strings.Builder
	b.WriteString(`{"index.mjs": "export const tools = {};"`)
	for i := range n {
		fmt.Fprintf(&b, `, "f%d.mjs": "export const x = 1;"`, i)
	}
	return b.String() + `, "` + again + `": ""}`
}

func TestValidateImportsOwnFiles(t *testing.T) {
	m, _ := args(t, "bus-times.json")
	files := `{"index.mjs": "import {url} from './lib/url.mjs'; import stops from './stops.json'; export const tools = { next_buses: async ({stop}, ctx) => (await ctx.fetch(url(stop + stops[stop]))).json() };",
		"lib/url.mjs": "export const url = (s) => 'https://api.example.com/stops/' + s;", "stops.json": "{\"12\": \"Main St\"}"}`
	b, rep := Validate(m, []byte(files), Options{})
	if !rep.OK {
		t.Fatalf("%+v", rep.Problems)
	}
	if !strings.Contains(b.Script, "Main St") || !strings.Contains(b.Script, "api.example.com/stops/") {
		t.Errorf("the script lacks the imported files:\n%s", b.Script)
	}
}

func TestBoxHostsRefused(t *testing.T) {
	_, files := args(t, "bus-times.json")
	for _, egress := range [][]string{{"box.example.org"}, {"*.example.org"}} {
		_, rep := Validate(set(t, "egress", egress), files, Options{BoxHosts: []string{"Box.Example.org"}})
		if rep.OK || !strings.Contains(rep.Problems[0].Why, "is the box itself") {
			t.Errorf("%v: %+v", egress, rep)
		}
	}
}

func TestEnvelope(t *testing.T) {
	m, f := args(t, "bus-times.json")
	b, _ := Validate(m, f, Options{})
	// Reordering the manifest changes nothing the card binds.
	hosts := []string{"b.example.com", "api.example.com"}
	b1, rep1 := Validate(set(t, "egress", hosts), f, Options{})
	b2, rep2 := Validate(set(t, "egress", []string{hosts[1], hosts[0]}), f, Options{})
	if !rep1.OK || !rep2.OK || b1.EnvelopeHash != b2.EnvelopeHash {
		t.Fatalf("order changed the hash: %+v %+v", rep1, rep2)
	}
	if b1.EnvelopeHash == b.EnvelopeHash {
		t.Error("a new host did not change the hash")
	}
	if got := b1.Envelope.Adds(b.Envelope); !slices.Equal(got, []string{"reaches b.example.com"}) {
		t.Errorf("Adds = %v", got)
	}
	if got := b.Envelope.Adds(b1.Envelope); len(got) != 0 {
		t.Errorf("a narrower version adds %v", got)
	}
	wide, _ := Validate(set(t, "egress", []string{"*"}), f, Options{})
	if !wide.Envelope.AnyWebsite() || !slices.Equal(wide.Envelope.Adds(b.Envelope), []string{"reaches any website"}) {
		t.Errorf("any website: %+v", wide.Envelope)
	}
	writes, _ := Validate(set(t, "tools", []any{map[string]any{"name": "next_buses", "description": "d", "effect": "write", "inputSchema": map[string]any{"type": "object"}}}, "test", nil), f, Options{})
	if writes == nil || writes.Envelope.Access != Write || !slices.Contains(writes.Envelope.Adds(b.Envelope), "the tool next_buses now writes") {
		t.Errorf("write: %+v", writes)
	}
	// The files' hash is of the bytes: one changed byte changes it.
	if FilesSHA256(map[string]string{"a.mjs": "x"}) == FilesSHA256(map[string]string{"a.mjs": "y"}) ||
		FilesSHA256(map[string]string{"a.mjs": "xb.mjs"}) == FilesSHA256(map[string]string{"a.mjs": "x", "b.mjs": ""}) {
		t.Error("FilesSHA256 collides")
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Bus times": "bus-times", "  Café Météo! ": "cafe-meteo", "🚌": "", "A--B__c": "a-b-c",
		"The quite long name of a connector for buses": "the-quite-long-name-of-a",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpect(t *testing.T) {
	cases := []struct {
		e      Expect
		result string
		ok     bool
	}{
		{Expect{Kind: "ok"}, `null`, true},
		{Expect{Kind: "nonempty"}, `null`, false},
		{Expect{Kind: "nonempty"}, `[ ]`, false},
		{Expect{Kind: "nonempty"}, `""`, false},
		{Expect{Kind: "nonempty"}, `[1]`, true},
		{Expect{Kind: "nonempty"}, `0`, true},
		{Expect{Kind: "contains", Contains: "Main St"}, `{"stop":"Main St"}`, true},
		{Expect{Kind: "contains", Contains: "Main St"}, `"at Main St"`, true},
		{Expect{Kind: "contains", Contains: "Elm"}, `{"stop":"Main St"}`, false},
	}
	for _, c := range cases {
		if ok, why := c.e.Check(json.RawMessage(c.result)); ok != c.ok || (!ok && why == "") {
			t.Errorf("%+v on %s = %v %q", c.e, c.result, ok, why)
		}
	}
}
