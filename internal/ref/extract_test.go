package ref

import (
	"reflect"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

// got is a compact view of a ref for table tests: kind, raw, line.
type got struct {
	Kind Kind
	Raw  string
	Line int
}

func extractAll(t *testing.T, data string) []got {
	t.Helper()
	refs, err := Extract("/_content/a/doc.md", []byte(data))
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	var out []got
	for _, r := range refs {
		checkSpan(t, []byte(data), r)
		out = append(out, got{r.Kind, r.Raw, r.Line})
	}
	return out
}

// checkSpan asserts the offsets name the target's bytes exactly.
func checkSpan(t *testing.T, data []byte, r Ref) {
	t.Helper()
	if r.Start < 0 || r.End < r.Start || r.End > len(data) {
		t.Fatalf("ref %+v: span out of range (len %d)", r, len(data))
	}
	if r.Verbatim && string(data[r.Start:r.End]) != r.Raw {
		t.Fatalf("ref %+v: bytes %q are not the raw target", r, data[r.Start:r.End])
	}
	if r.Path+r.Query+r.Fragment != r.Raw {
		t.Fatalf("ref %+v: path, query and fragment do not make the raw target", r)
	}
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []got
	}{
		{"no frontmatter, no refs", "# Title\n\nplain text\n", nil},
		{"frontmatter scalars at any depth", "---\nref: a.md\nparticipants:\n  - ref: _content/people/P.person.card\n    role: x\nnested:\n  deeper:\n    refs: [b.md, \"c d.md\", 'e.md']\n---\n",
			[]got{{Frontmatter, "a.md", 2}, {Frontmatter, "_content/people/P.person.card", 4}, {Frontmatter, "b.md", 8}, {Frontmatter, "c d.md", 8}, {Frontmatter, "e.md", 8}}},
		{"frontmatter block list and anchors", "---\nrefs:\n  - one.md\n  - &a two.md\n  - !!str three.md\nother: *a\n---\nbody\n",
			[]got{{Frontmatter, "one.md", 3}, {Frontmatter, "two.md", 4}, {Frontmatter, "three.md", 5}}},
		{"block scalars are prose", "---\nref: |\n  a.md\nrefs:\n  - >\n    b.md\n  - c.md\ndesc: \"ref: d.md\"\n---\n",
			[]got{{Frontmatter, "c.md", 7}}},
		{"null and http refs are not box refs", "---\nref:\nrefs: [~, https://example.com/x, mailto:a@b.c]\n---\n", nil},
		{"fragment-only and empty refs are kept (they fail closed)", "---\nref: \"#top\"\nrefs: [\"\", \"?q\"]\n---\n",
			[]got{{Frontmatter, "#top", 2}, {Frontmatter, "", 3}, {Frontmatter, "?q", 3}}},
		{"CRLF", "---\r\ntitle: x\r\nref: a.md\r\n---\r\n[l](b.md)\r\n[[w]]\r\n",
			[]got{{Frontmatter, "a.md", 3}, {Link, "b.md", 5}, {Wikilink, "w", 6}}},
		{"BOM", "\ufeff---\nref: a.md\n---\n", []got{{Frontmatter, "a.md", 2}}},
		{"unicode before the value", "---\ntitlé: é\nrefs: [é.md, \"ü/x.md\"]\n---\n", []got{{Frontmatter, "é.md", 3}, {Frontmatter, "ü/x.md", 3}}},
		{"markdoc ref attributes", "{% card ref=\"/_content/x.card\" title='a' %}\n{% x\n  ref='y.md' /%}\n{% y xref=\"no.md\" %}{% /card %}\n",
			[]got{{Markdoc, "/_content/x.card", 1}, {Markdoc, "y.md", 3}}},
		{"links and images", "[a](b.md) ![i](img/p%20q.png \"title\") [t](<my file.md>) [p](x_(1).md) [e](x\\).md)\n",
			[]got{{Link, "b.md", 1}, {Link, "img/p%20q.png", 1}, {Link, "my file.md", 1}, {Link, "x_(1).md", 1}, {Link, "x\\).md", 1}}},
		{"image inside a link", "[![img](a.png)](b.md)\n", []got{{Link, "a.png", 1}, {Link, "b.md", 1}}},
		{"query and fragment", "[a](b.md?x=1#y)\n", []got{{Link, "b.md?x=1#y", 1}}},
		{"external and anchors are not refs", "[w](https://e.com) [m](mailto:a@b.c) [t](tel:123) [p](//host/x) [a](#top) [h](#)\n", nil},
		{"reference definitions", "[def]: ./defs/d.md \"t\"\n   [x]: <a b.md>\nnot [y]: z.md\n", []got{{Link, "./defs/d.md", 1}, {Link, "a b.md", 2}}},
		{"empty destination is a ref (it fails closed)", "[a]()\n", []got{{Link, "", 1}}},
		{"wikilinks", "[[entity-leo]] [[moc-people|People]] [[n#Head]] ![[pic.png]] [[#local]] [[]] [[a\\|b]]\n",
			[]got{{Wikilink, "entity-leo", 1}, {Wikilink, "moc-people", 1}, {Wikilink, "n#Head", 1}, {Wikilink, "pic.png", 1}, {Wikilink, "a", 1}}},
		{"fenced code is skipped", "```\n[a](a.md)\n```\n~~~~md\n[[b]]\n~~~\nstill fenced [c](c.md)\n~~~~\n  ```go\n  {% x ref=\"d\" %}\n  ```\n[e](e.md)\n",
			[]got{{Link, "e.md", 12}}},
		{"unclosed fence runs to the end", "[a](a.md)\n```\n[b](b.md)\n", []got{{Link, "a.md", 1}}},
		{"code spans are skipped", "`[a](a.md)` ``[b](b.md) ` `` [c](c.md) `unclosed [d](d.md)\n", []got{{Link, "c.md", 1}, {Link, "d.md", 1}}},
		{"code span across lines, not across paragraphs", "`a\n[x](x.md)` [y](y.md)\n\n`b\n\n[z](z.md)`\n", []got{{Link, "y.md", 2}, {Link, "z.md", 6}}},
		{"escapes and comments", "\\[a](a.md) <!-- [b](b.md) --> [c](c.md)\n", []got{{Link, "c.md", 1}}},
		{"not links", "[a] (b.md) [a](b.md [a](\n\n)\n", nil},
		{"unclosed frontmatter reads as body", "---\nref: a.md\n[b](b.md)\n", []got{{Link, "b.md", 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if g := extractAll(t, tt.data); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("got  %+v\nwant %+v", g, tt.want)
			}
		})
	}
}

func TestExtractSplit(t *testing.T) {
	refs, err := Extract("/x.md", []byte("[a](b.md?x=1#y?z) [[n#h?q]]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{
		{Kind: Link, Raw: "b.md?x=1#y?z", Path: "b.md", Query: "?x=1", Fragment: "#y?z", Start: 4, End: 16, Line: 1, Verbatim: true},
		{Kind: Wikilink, Raw: "n#h?q", Path: "n", Fragment: "#h?q", Start: 20, End: 25, Line: 1, Verbatim: true},
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("got  %+v\nwant %+v", refs, want)
	}
}

// Refs whose bytes are not their value (escapes, folding, doubled quotes) are found but not Verbatim,
// so the canonical pass never rewrites them.
func TestExtractNotVerbatim(t *testing.T) {
	data := "---\nrefs:\n  - \"a\\x2emd\"\n  - 'it''s.md'\n  - folded\n    plain.md\n  - \"ok.md\"\n---\n{% x ref=\"q\\\"t.md\" %}\n"
	refs, err := Extract("/x.md", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	var verbatim []bool
	for _, r := range refs {
		checkSpan(t, []byte(data), r)
		raws = append(raws, r.Raw)
		verbatim = append(verbatim, r.Verbatim)
	}
	if want := []string{"a.md", "it's.md", "folded plain.md", "ok.md", `q"t.md`}; !reflect.DeepEqual(raws, want) {
		t.Errorf("raws %q, want %q", raws, want)
	}
	if want := []bool{false, false, false, true, false}; !reflect.DeepEqual(verbatim, want) {
		t.Errorf("verbatim %v, want %v", verbatim, want)
	}
}

func TestExtractBadYAML(t *testing.T) {
	refs, err := Extract("/_content/bad.md", []byte("---\nref: [a.md\n---\n[b](b.md)\n"))
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "/_content/bad.md") {
		t.Fatalf("err = %v, want an Invalid error naming the file", err)
	}
	if len(refs) != 1 || refs[0].Raw != "b.md" {
		t.Errorf("refs = %+v, want the body's one link", refs)
	}
}

func TestExternalURLs(t *testing.T) {
	data := "---\nref: https://fm.example.com/a\ntitle: https://not-a-ref.example.com\n---\n" +
		"[a](https://e.com/x?y=1) <http://auto.example.com/p> see https://bare.example.com/q). and (https://wiki.example.org/A_(b)).\n" +
		"`https://code.example.com` [m](mailto:a@b.c) httpx://no {% x ref=\"https://md.example.com\" %}\n" +
		"```\nhttps://fenced.example.com\n```\n"
	var urls []string
	for _, u := range ExternalURLs([]byte(data)) {
		if data[u.Start:u.End] != u.URL {
			t.Errorf("url %+v: span is %q", u, data[u.Start:u.End])
		}
		urls = append(urls, u.URL)
	}
	want := []string{"https://fm.example.com/a", "https://e.com/x?y=1", "http://auto.example.com/p", "https://bare.example.com/q",
		"https://wiki.example.org/A_(b)", "https://md.example.com"}
	if !reflect.DeepEqual(urls, want) {
		t.Errorf("got  %q\nwant %q", urls, want)
	}
}

// A file of nothing but openers must not take quadratic time; this finishes in milliseconds.
func TestExtractHostile(t *testing.T) {
	for _, s := range []string{"[", "`", "{%", "[[", "<!--", "](", "![", "\\", "[a](", "{% \"", "[x]", "[![", "[[a]", "{% ref=\"a %}", "`` `", "[a]: "} {
		data := []byte(strings.Repeat(s, 50_000))
		if _, err := Extract("/x.md", data); err != nil {
			t.Fatal(err)
		}
		ExternalURLs(data)
	}
}
