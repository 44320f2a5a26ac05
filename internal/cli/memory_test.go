package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// mem runs one memory verb with --json against root and decodes stdout into a generic map.
func mem(t *testing.T, root string, wantCode int, args ...string) map[string]any {
	t.Helper()
	got := runCLI(t, run{args: append([]string{"--box", root, "--json"}, args...), cwd: root})
	if got.code != wantCode {
		t.Fatalf("box %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got.code, wantCode, got.stdout, got.stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(got.stdout), &out); err != nil {
		t.Fatalf("box %s --json: %v\n%s", strings.Join(args, " "), err, got.stdout)
	}
	return out
}

// hasKeys fails unless v holds every key (the stable --json shape; fields are only ever added).
func hasKeys(t *testing.T, what string, v any, keys ...string) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %T is not an object", what, v)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q in %v", what, k, m)
		}
	}
}

func TestMemoryVerbsJSON(t *testing.T) {
	root := initBox(t)
	r := mem(t, root, ExitOK, "remember", "Leo has swim practice Thursdays at 5:30.")
	hasKeys(t, "remember", r, "id", "path", "entry", "text")
	mem(t, root, ExitOK, "remember", "--as", "Claude", "Ana Maria lives in Porto.")

	refused := runCLI(t, run{args: []string{"--box", root, "remember", "my password is hunter2"}, cwd: root})
	if refused.code != ExitRefused || !strings.Contains(refused.stderr, "password") || strings.Contains(refused.stderr, "hunter2") {
		t.Errorf("secret: exit %d, stderr %q", refused.code, refused.stderr)
	}
	mem(t, root, ExitRefused, "remember", "--as", "Claude", "--core", "Lives in Lisbon.")
	core := mem(t, root, ExitOK, "remember", "--core", "Lives in Lisbon.")
	if core["path"] != "/_content/memory/MEMORY.md" {
		t.Errorf("core: %v", core)
	}

	s := mem(t, root, ExitOK, "search", "leo", "swim")
	hitsOf := func(s map[string]any) []any { h, _ := s["hits"].([]any); return h }
	if h := hitsOf(s); len(h) != 1 {
		t.Fatalf("search: %v", s)
	} else {
		hasKeys(t, "hit", h[0], "path", "kind", "snippet", "text", "score", "who", "trust", "date")
	}
	texts := map[any]bool{}
	for _, h := range hitsOf(mem(t, root, ExitOK, "search", "swim", "porto")) {
		if h.(map[string]any)["partial"] == true {
			texts[h.(map[string]any)["text"]] = true
		}
	}
	if len(texts) != 2 || !texts["Ana Maria lives in Porto."] || !texts["Leo has swim practice Thursdays at 5:30."] {
		t.Errorf("search swim porto: want both lines as partial hits with their plain text: %v", texts)
	}
	human := runCLI(t, run{args: []string{"--box", root, "search", "leo", "swim", "porto"}, cwd: root})
	if before, after, ok := strings.Cut(human.stdout, "Partial matches"); !ok || !strings.Contains(before, "**Leo**") || !strings.Contains(after, "**Porto**") {
		t.Errorf("search leo swim porto: the match, then partial matches under their heading:\n%s", human.stdout)
	}
	if h := hitsOf(mem(t, root, ExitOK, "search", "porto", "--trust", "own")); len(h) != 0 {
		t.Errorf("--trust own found an outside line: %v", h)
	}

	td := mem(t, root, ExitOK, "tidy")
	hasKeys(t, "tidy", td, "filed", "created", "replaced", "dropped", "entry", "text")
	if td["filed"].(float64) != 2 {
		t.Errorf("tidy: %v", td)
	}
	n := mem(t, root, ExitOK, "read", "entity-leo")
	hasKeys(t, "read", n, "name", "path", "kind", "title", "text")
	if !strings.Contains(n["text"].(string), "swim practice") {
		t.Errorf("read: %v", n)
	}
	if n := mem(t, root, ExitOK, "read", "entity-ana-maria"); n["outside"] != true {
		t.Errorf("a note only another assistant wrote is not outside: %v", n)
	}
	mem(t, root, ExitNotFound, "read", "entity-nobody")
	if h := hitsOf(mem(t, root, ExitOK, "search", "leo", "--kind", "note")); len(h) != 1 || h[0].(map[string]any)["name"] != "entity-leo" {
		t.Errorf("note hit: %v", h)
	}

	o := mem(t, root, ExitOK, "overview")
	hasKeys(t, "overview", o, "router", "notes", "inbox")
	if notes, _ := o["notes"].([]any); len(notes) < 2 {
		t.Errorf("overview notes: %v", o["notes"])
	}
	rc := mem(t, root, ExitOK, "recent", "--n", "3")
	if items, _ := rc["items"].([]any); len(items) != 3 {
		t.Fatalf("recent: %v", rc)
	} else {
		hasKeys(t, "recent item", items[0], "time", "who", "via", "op", "summary", "entry")
	}

	f := mem(t, root, ExitOK, "forget", "it")
	hasKeys(t, "forget", f, "matched", "removed", "needsConfirm", "text")
	if f["removed"].(float64) != 0 {
		t.Errorf("forget it removed something: %v", f)
	}
	f = mem(t, root, ExitOK, "forget", "swim")
	if f["removed"].(float64) != 1 {
		t.Errorf("forget swim: %v", f)
	}
	u := mem(t, root, ExitOK, "undo")
	hasKeys(t, "undo", u, "entry", "undoOf", "commit", "summary")
	if u["undoOf"] != f["entry"] {
		t.Errorf("undo %v did not undo the forget %v", u, f["entry"])
	}
	d := mem(t, root, ExitOK, "diary", "--n", "50")
	entries, _ := d["entries"].([]any)
	if len(entries) < 7 {
		t.Fatalf("diary: %v", d)
	}
	hasKeys(t, "diary entry", entries[0], "id", "time", "actor", "op", "summary")
	ops := map[string]bool{}
	for _, e := range entries {
		ops[e.(map[string]any)["op"].(string)] = true
	}
	for _, op := range []string{"init", "remember", "tidy", "forget", "undo"} {
		if !ops[op] {
			t.Errorf("the diary has no %s entry: %v", op, ops)
		}
	}
	ri := mem(t, root, ExitOK, "reindex")
	if ri["files"].(float64) < 4 {
		t.Errorf("reindex: %v", ri)
	}
}

func TestForgetNeedsYes(t *testing.T) {
	root := initBox(t)
	for _, d := range []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"} {
		mem(t, root, ExitOK, "remember", "Leo walks the dog on "+d+".")
	}
	f := mem(t, root, ExitRefused, "forget", "dog")
	if f["needsConfirm"] != true || f["removed"].(float64) != 0 {
		t.Fatalf("forget dog: %v", f)
	}
	if f := mem(t, root, ExitOK, "forget", "dog", "--yes"); f["removed"].(float64) != 6 {
		t.Fatalf("forget dog --yes: %v", f)
	}
}
