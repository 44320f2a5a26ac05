package ref

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/finding"
)

// writeTree writes files (box paths without the leading "/") under root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		host := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(host, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// testBox is a small box with a folder outside it that symlinks point to.
func testBox(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "box")
	writeTree(t, root, map[string]string{
		".box/box.json":                          `{"shapeVersion":1}`,
		"README.md":                              "# box\n",
		"_content/a/doc.md":                      "doc\n",
		"_content/a/b.md":                        "b\n",
		"_content/a/my file.md":                  "spaces\n",
		"_content/a/sub/c.md":                    "c\n",
		"_content/a/Plan.doc.card":               "---\n---\n",
		"_content/a/Plan.doc.attach/pic.png":     "png",
		"_content/people/Priya.person.card":      "---\n---\n",
		"_content/memory/notes/entity-leo.md":    "leo\n",
		"_content/memory/maps/moc-people.md":     "people\n",
		"_content/memory/maps/moc-people/a.md":   "a\n",
		"_content/docs/entity-leo.md":            "another leo\n",
		"_content/recipes/Soup.md":               "soup\n",
		"_content/recipes/deep/er/Stew.md":       "stew\n",
		"_content/Stew.md":                       "shallow stew\n",
		"_config/settings.card":                  "---\n---\n",
		"_tmp/scratch.md":                        "tmp\n",
		"../outside/secret.md":                   "secret\n",
		"../outside/entity-mallory.md":           "outside note\n",
		"_content/memory/notes/topic-plain.md":   "topic\n",
		"_content/memory/notes/sub/topic-sub.md": "sub\n",
	})
	symlink(t, filepath.Join(dir, "outside"), filepath.Join(root, "_content/out"))
	symlink(t, filepath.Join(dir, "outside/secret.md"), filepath.Join(root, "_content/leak.md"))
	symlink(t, filepath.Join(dir, "outside/entity-mallory.md"), filepath.Join(root, "_content/memory/notes/entity-mallory.md"))
	symlink(t, filepath.Join(root, "_content/a/b.md"), filepath.Join(root, "_content/inlink.md"))
	return root
}

func TestResolve(t *testing.T) {
	root := testBox(t)
	const doc = "/_content/a/doc.md"
	ok := func(form Form, target string) Resolution { return Resolution{Form: form, Target: target, Exists: true} }
	missing := func(form Form, target string) Resolution { return Resolution{Form: form, Target: target} }
	closed := func(form Form, reason string) Resolution { return Resolution{Form: form, Reason: reason} }
	tests := []struct {
		from, target string
		want         Resolution
	}{
		// What resolves.
		{doc, "/_content/a/b.md", ok(Rooted, "/_content/a/b.md")},
		{doc, "b.md", ok(Relative, "/_content/a/b.md")},
		{doc, "./sub/c.md", ok(Relative, "/_content/a/sub/c.md")},
		{doc, "sub/../b.md", ok(Relative, "/_content/a/b.md")},
		{doc, "../people/Priya.person.card", ok(Relative, "/_content/people/Priya.person.card")},
		{doc, "b.md#heading", ok(Relative, "/_content/a/b.md")},
		{doc, "b.md?v=2", ok(Relative, "/_content/a/b.md")},
		{doc, "b.md?v=2#h", ok(Relative, "/_content/a/b.md")},
		{doc, "/_config/settings.card", ok(Rooted, "/_config/settings.card")},
		{doc, "/_tmp/scratch.md", ok(Rooted, "/_tmp/scratch.md")},
		{doc, "/_content/a/", ok(Rooted, "/_content/a")},
		{doc, "/_content/inlink.md", ok(Rooted, "/_content/inlink.md")},
		{"/_content/a/Plan.doc.card", "attach/pic.png", ok(Attach, "/_content/a/Plan.doc.attach/pic.png")},
		{"/_content/a/Plan.doc.card", "attach/", ok(Attach, "/_content/a/Plan.doc.attach")},
		{"/_content/a/Plan.doc.card", "attach/x/../pic.png", ok(Attach, "/_content/a/Plan.doc.attach/pic.png")},
		{"/_content/a/doc.md", "attach/pic.png", missing(Attach, "/_content/a/doc.attach/pic.png")},
		{"_content/a/doc.md", "b.md", ok(Relative, "/_content/a/b.md")}, // a bare from path is a box path too
		// Missing targets resolve, to something absent.
		{doc, "missing.md", missing(Relative, "/_content/a/missing.md")},
		{doc, "/_content/nope/x.md", missing(Rooted, "/_content/nope/x.md")},
		{doc, "b.md/x", missing(Relative, "/_content/a/b.md/x")},
		{doc, "_content/people/Priya.person.card", missing(Relative, "/_content/a/_content/people/Priya.person.card")},
		// Fail closed: every case resolves to nothing, whatever exists.
		{doc, "", closed(Relative, "the ref is empty")},
		{doc, "   ", closed(Relative, "the ref is empty")},
		{doc, "#", closed(Relative, "the ref is only a #fragment and names no file")},
		{doc, "#heading", closed(Relative, "the ref is only a #fragment and names no file")},
		{doc, "?", closed(Relative, "the ref is only a ?query and names no file")},
		{doc, "?q=1#f", closed(Relative, "the ref is only a ?query and names no file")},
		{doc, "/", closed(Rooted, "the ref names the box root itself")},
		{doc, "../..", closed(Relative, "the ref names the box root itself")},
		{doc, "/_content/..", closed(Rooted, "the ref names the box root itself")},
		{"/README.md", ".", closed(Relative, "the ref names the box root itself")},
		{doc, "../../..", closed(Relative, "the ref leaves the box (.. goes above the box root)")},
		{doc, "../../../outside/secret.md", closed(Relative, "the ref leaves the box (.. goes above the box root)")},
		{doc, "/../box/_content/a/b.md", closed(Rooted, "the ref leaves the box (.. goes above the box root)")},
		{"/_content/a/Plan.doc.card", "attach/../b.md", closed(Attach, "the ref leaves the card's attach folder (.. above attach/)")},
		{doc, "/_content", closed(Rooted, "the ref names the area /_content itself, not something in it")},
		{doc, "../../_config", closed(Relative, "the ref names the area /_config itself, not something in it")},
		{doc, "/README.md", closed(Rooted, "the ref leads to /README.md, outside the five areas (_content, _config, _bookkeeping, _publish, _tmp)")},
		{doc, "../../README.md", closed(Relative, "the ref leads to /README.md, outside the five areas (_content, _config, _bookkeeping, _publish, _tmp)")},
		{doc, "/.box/box.json", closed(Rooted, "the ref leads to /.box/box.json, outside the five areas (_content, _config, _bookkeeping, _publish, _tmp)")},
		{doc, "/.git/config", closed(Rooted, "the ref leads to /.git/config, outside the five areas (_content, _config, _bookkeeping, _publish, _tmp)")},
		{doc, "/etc/passwd", closed(Rooted, "the ref leads to /etc/passwd, outside the five areas (_content, _config, _bookkeeping, _publish, _tmp)")},
		{"/README.md", "x.md", closed(Relative, "the ref leads to /x.md, outside the five areas (_content, _config, _bookkeeping, _publish, _tmp)")},
		{doc, `sub\c.md`, closed(Relative, "the ref contains a backslash; box paths use /")},
		{doc, "b\x00.md", closed(Relative, "the ref contains a NUL byte")},
		{doc, "/_content/out/secret.md", closed(Rooted, "the ref /_content/out/secret.md leads outside the box through a symlink")},
		{doc, "../out/secret.md", closed(Relative, "the ref /_content/out/secret.md leads outside the box through a symlink")},
		{doc, "/_content/out/missing.md", closed(Rooted, "the ref /_content/out/missing.md leads outside the box through a symlink")},
		{doc, "/_content/leak.md", closed(Rooted, "the ref /_content/leak.md leads outside the box through a symlink")},
	}
	for _, tt := range tests {
		t.Run(tt.from+" "+tt.target, func(t *testing.T) {
			got, err := NewResolver(root).Resolve(tt.from, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Resolve(%q, %q)\n got  %+v\n want %+v", tt.from, tt.target, got, tt.want)
			}
			if got.Closed() && (got.Target != "" || got.Exists) {
				t.Errorf("a closed resolution has a target: %+v", got)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	root := testBox(t)
	if _, err := NewResolver(root).Resolve("/_content/../..", "b.md"); err == nil {
		t.Error("a from path above the root: want an error")
	}
	if _, err := NewResolver(filepath.Join(root, "nope")).Resolve("/_content/a/doc.md", "b.md"); err == nil {
		t.Error("a box folder that does not exist: want an error")
	}
}

func TestResolveLink(t *testing.T) {
	root := testBox(t)
	tests := []struct {
		body string
		want Resolution
	}{
		{"[x](my%20file.md)", Resolution{Form: Relative, Target: "/_content/a/my file.md", Exists: true}},
		{"[x](<my file.md>)", Resolution{Form: Relative, Target: "/_content/a/my file.md", Exists: true}},
		{`[x](sub\/c.md)`, Resolution{Form: Relative, Target: "/_content/a/sub/c.md", Exists: true}},
		{"[x](b.md%ZZ)", Resolution{Form: Relative, Target: "/_content/a/b.md%ZZ"}},
		{"[x](%2E%2E/%2E%2E/%2E%2E/etc)", Resolution{Form: Relative, Reason: "the ref leaves the box (.. goes above the box root)"}},
	}
	for _, tt := range tests {
		refs, _ := Extract("/_content/a/doc.md", []byte(tt.body))
		if len(refs) != 1 {
			t.Fatalf("%s: %d refs", tt.body, len(refs))
		}
		got, err := NewResolver(root).ResolveRef("/_content/a/doc.md", refs[0])
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.body, got, err, tt.want)
		}
	}
}

func TestWikilink(t *testing.T) {
	root := testBox(t)
	tests := []struct {
		name string
		want Resolution
	}{
		{"entity-leo", Resolution{Form: Name, Target: "/_content/memory/notes/entity-leo.md", Exists: true}}, // notes beat docs/
		{"entity-leo#Timeline", Resolution{Form: Name, Target: "/_content/memory/notes/entity-leo.md", Exists: true}},
		{"entity-leo.md", Resolution{Form: Name, Target: "/_content/memory/notes/entity-leo.md", Exists: true}},
		{"moc-people", Resolution{Form: Name, Target: "/_content/memory/maps/moc-people.md", Exists: true}},
		{"moc-people/a", Resolution{Form: Name, Target: "/_content/memory/maps/moc-people/a.md", Exists: true}},
		{"topic-sub", Resolution{Form: Name, Target: "/_content/memory/notes/sub/topic-sub.md", Exists: true}},
		{"Soup", Resolution{Form: Name, Target: "/_content/recipes/Soup.md", Exists: true}},
		{"soup", Resolution{Form: Name, Target: "/_content/recipes/Soup.md", Exists: true}}, // case-insensitive fallback
		{"Stew", Resolution{Form: Name, Target: "/_content/Stew.md", Exists: true}},         // shallowest wins
		{"er/Stew", Resolution{Form: Name, Target: "/_content/recipes/deep/er/Stew.md", Exists: true}},
		{"pic.png", Resolution{Form: Name, Target: "/_content/a/Plan.doc.attach/pic.png", Exists: true}},
		{"/_content/recipes/Soup", Resolution{Form: Rooted, Target: "/_content/recipes/Soup.md", Exists: true}},
		{"nobody", Resolution{Form: Name}},
		{"ecipes/Soup", Resolution{Form: Name}}, // a path suffix matches whole names only
		{"entity-mallory", Resolution{Form: Name}},
		{"leak", Resolution{Form: Name}}, // /_content/leak.md points out: never a match
		{"../a/b", Resolution{Form: Name, Reason: "a wikilink names a note; it cannot hold empty, . or .. folder names"}},
		{"/README", Resolution{Form: Rooted, Reason: "the ref leads to /README, outside the five areas (_content, _config, _bookkeeping, _publish, _tmp)"}},
	}
	rv := NewResolver(root)
	for _, tt := range tests {
		got, err := rv.Wikilink("/_content/a/doc.md", tt.name)
		if err != nil || got != tt.want {
			t.Errorf("[[%s]]: got %+v, %v\n want %+v", tt.name, got, err, tt.want)
		}
	}
}

// Symlinks that lead out of the box are refused however a ref reaches them.
func TestSymlinkOutRefused(t *testing.T) {
	root := testBox(t)
	for _, target := range []string{"/_content/out/secret.md", "../out/secret.md", "/_content/leak.md", "../leak.md", "../out"} {
		res, err := NewResolver(root).Resolve("/_content/a/doc.md", target)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Closed() || res.Exists || !strings.Contains(res.Reason, "symlink") {
			t.Errorf("%s: %+v, want refused through a symlink", target, res)
		}
	}
	res, err := NewResolver(root).Wikilink("/_content/a/doc.md", "entity-mallory")
	if err != nil || res.Exists {
		t.Errorf("[[entity-mallory]] through a symlink out: %+v, %v", res, err)
	}
	fs := NewResolver(root).Check("/_content/a/doc.md", []byte("[s](../leak.md)\n"))
	if len(fs) != 1 || fs[0].Code != CodeClosed || !strings.Contains(fs[0].Message, "symlink") {
		t.Errorf("Check: %v", fs)
	}
}

func TestCheck(t *testing.T) {
	root := testBox(t)
	data := "---\nref: b.md\nrefs: [missing.md, \"#top\", /README.md]\n---\n" +
		"[ok](sub/c.md) [gone](gone.md#x) [[entity-leo]] [[nobody]] [web](https://e.com)\n" +
		"{% x ref=\"../../..\" /%} [empty]()\n"
	got := NewResolver(root).Check("/_content/a/doc.md", []byte(data))
	type row struct {
		Line int
		Code string
		Sev  finding.Severity
	}
	var rows []row
	for _, f := range got {
		if f.Path != "/_content/a/doc.md" {
			t.Errorf("finding path %q", f.Path)
		}
		rows = append(rows, row{f.Line, f.Code, f.Severity})
	}
	want := []row{
		{3, CodeBroken, finding.Warning}, {3, CodeClosed, finding.Warning}, {3, CodeClosed, finding.Warning},
		{5, CodeBroken, finding.Warning}, {5, CodeBroken, finding.Warning},
		{6, CodeClosed, finding.Warning}, {6, CodeClosed, finding.Warning},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got  %v\nwant %v\n%v", rows, want, got)
	}
	for _, f := range got {
		if f.Code == CodeBroken && !strings.HasPrefix(f.Message, "Broken reference") {
			t.Errorf("message %q", f.Message)
		}
	}
	if fs := NewResolver(root).Check("/_content/a/doc.md", []byte("[b](b.md) [[Soup]] {% x ref=\"/_content/a/b.md\" /%}\n")); len(fs) != 0 {
		t.Errorf("clean file: %v", fs)
	}
}

func TestCollisions(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"_content/c/Plan.md": "", "_content/c/plan.md": "", "_content/c/PLAN.md": "", "_content/c/other.md": "",
		"_content/c/Sub/x.md": "", "_content/c/sub": "", "_content/d/one.md": "",
	})
	got := Collisions(root, "/_content/c")
	var paths []string
	for _, f := range got {
		if f.Severity != finding.Error || f.Code != CodeCollision {
			t.Errorf("finding %v", f)
		}
		paths = append(paths, f.Path)
	}
	want := []string{"/_content/c/PLAN.md", "/_content/c/Plan.md", "/_content/c/Sub", "/_content/c/plan.md", "/_content/c/sub"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("got %q\nwant %q", paths, want)
	}
	if fs := Collisions(root, "/_content/d"); len(fs) != 0 {
		t.Errorf("no collision: %v", fs)
	}
	if fs := Collisions(root, "/_content/none"); len(fs) != 0 {
		t.Errorf("missing folder: %v", fs)
	}
}
