package imports

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/markdoc"
)

// A basic-memory project is a folder of Markdown notes (docs/IMPORTS.md names the version followed):
// YAML frontmatter (title, type, tags, permalink), prose, observations "- [category] text #tag
// (context)" and relations "- relation_type [[Target]] (context)", anywhere in the body outside code
// fences. Each observation becomes a line naming its note's title, each relation a sentence; the note's
// type travels as tidy's hint. The note itself, without its observation and relation lines, is kept as
// a document under /_content/imports/basic-memory/ (its frontmatter rewritten so the box does not take
// its type: key for one of its own card types).

var (
	bmObservation = lazyregexp.New(`^\s*[-*]\s+\[([^\[\]]+)\]\s+(.+)$`)
	bmRelation    = lazyregexp.New(`^\s*[-*]\s+([\p{L}_][\p{L}\p{N}_ -]*?)\s+\[\[([^\[\]]+)\]\](.*)$`)
)

type bmFront struct {
	Title     string `yaml:"title"`
	Type      string `yaml:"type"`
	Permalink string `yaml:"permalink"`
	Tags      any    `yaml:"tags"`
}

func (r *reader) basicMemory() error {
	return r.walk(func(f folderFile) error {
		if !strings.HasSuffix(strings.ToLower(f.rel), ".md") {
			return nil // basic-memory's notes are Markdown; anything else is not part of its graph
		}
		where := r.src.Name + "/" + f.rel
		data, err := readAll(f)
		if f.size > MaxFolderFile || errors.Is(err, errTooBig) {
			r.skip(where, "the note is over %d MiB", MaxFolderFile>>20)
			return nil
		}
		if err != nil {
			return r.jsonFail(where, "it cannot be read", err)
		}
		front, body, line0, err := splitFront(data)
		if err != nil {
			return r.bad(where, "%v", err)
		}
		var fm bmFront
		if len(front) > 0 {
			if err := yaml.Unmarshal(front, &fm); err != nil {
				return r.bad(where+" line 2", "the frontmatter is not YAML (%v)", err)
			}
		}
		title := strings.TrimSpace(fm.Title)
		if title == "" {
			title = strings.TrimSuffix(f.rel[strings.LastIndex(f.rel, "/")+1:], ".md")
		}
		permalink := strings.TrimSpace(fm.Permalink)
		if permalink == "" {
			permalink = Slug(strings.TrimSuffix(f.rel, ".md"))
		}
		var prose []string
		fence := false
		obs, rels := 0, 0
		for i, ln := range strings.Split(string(body), "\n") {
			at := fmt.Sprintf("%s line %d", where, line0+i)
			t := strings.TrimSpace(ln)
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence = !fence
			}
			if !fence {
				if m := bmObservation.FindStringSubmatch(ln); m != nil && !isTask(m[1]) {
					obs++
					if err := r.line(Line{Text: naming(title, m[2]), File: f.rel, Where: at,
						ID:     fmt.Sprintf("%s, observation %d [%s]", permalink, obs, m[1]),
						Key:    "obs\x00" + permalink + "\x00" + m[1] + "\x00" + m[2],
						Entity: title, Type: fm.Type}); err != nil {
						return err
					}
					continue
				}
				if m := bmRelation.FindStringSubmatch(ln); m != nil {
					rels++
					target, _, _ := strings.Cut(m[2], "|")
					text := title + " " + relationPhrase(m[1]) + " " + strings.TrimSpace(target) + "." + strings.TrimRight(" "+strings.TrimSpace(m[3]), " ")
					if err := r.line(Line{Text: text, File: f.rel, Where: at,
						ID:     fmt.Sprintf("%s, relation %s [[%s]]", permalink, m[1], target),
						Key:    "rel\x00" + permalink + "\x00" + m[1] + "\x00" + target,
						Entity: title, Type: fm.Type}); err != nil {
						return err
					}
					continue
				}
				if t == "## Observations" || t == "## Relations" {
					continue
				}
			}
			prose = append(prose, ln)
		}
		doc := bmDocument(title, permalink, fm, strings.Join(prose, "\n"))
		return r.doc(Doc{Path: f.rel, Data: doc, File: f.rel, ID: "note " + permalink, Key: "note\x00" + permalink, Where: where})
	})
}

// isTask tells a Markdown task ("- [ ] call Ana", "- [x] done") from an observation's category.
func isTask(cat string) bool { return cat == " " || cat == "x" || cat == "X" }

// splitFront separates YAML frontmatter from the body; line0 is the body's first line number.
func splitFront(data []byte) (front, body []byte, line0 int, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, _, found := bytes.Cut(data, []byte("\n"))
	if !found || !markdoc.IsFrontDelimiter(first) {
		return nil, data, 1, nil
	}
	rest := data[len(first)+1:]
	lines := bytes.SplitAfter(rest, []byte("\n"))
	n := 0
	for i, l := range lines {
		if markdoc.IsFrontDelimiter(bytes.TrimSuffix(l, []byte("\n"))) {
			return rest[:n], rest[n+len(l):], i + 3, nil
		}
		n += len(l)
	}
	return nil, nil, 0, fmt.Errorf("the frontmatter starts with --- but never ends; close it with a line of ---")
}

// bmDocument is the kept note: new frontmatter (so the box never reads basic-memory's type: as one of
// its own card types), then the prose as written.
func bmDocument(title, permalink string, fm bmFront, prose string) []byte {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %s\n", yamlString(title))
	fmt.Fprintf(&b, "permalink: %s\n", yamlString(permalink))
	if fm.Type != "" {
		fmt.Fprintf(&b, "basic-memory-type: %s\n", yamlString(fm.Type))
	}
	switch t := fm.Tags.(type) {
	case string:
		if strings.TrimSpace(t) != "" {
			fmt.Fprintf(&b, "tags: [%s]\n", yamlString(t))
		}
	case []any:
		var tags []string
		for _, x := range t {
			tags = append(tags, yamlString(fmt.Sprint(x)))
		}
		if len(tags) > 0 {
			fmt.Fprintf(&b, "tags: [%s]\n", strings.Join(tags, ", "))
		}
	}
	b.WriteString("imported-from: \"basic-memory\"\n---\n")
	b.WriteString(strings.TrimLeft(prose, "\n"))
	if !strings.HasSuffix(prose, "\n") {
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
