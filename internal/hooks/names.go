package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Row is one line of the name index: a declared name, what declares it and where.
type Row struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // func, type, class, def, const, var, note, map, <card type> …
	File string `json:"file"` // host path
	Line int    `json:"line"`
}

// maxCodeSize is the largest source file the code walk reads.
const maxCodeSize = 1 << 20

// maxCodeFiles is how many source files the code walk indexes: a project bigger than this is indexed only
// in part, and the walk stops there. A variable so a test can reach it with a few files.
var maxCodeFiles = 20000

// skipDirs are never walked for declarations.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true, "dist": true, "build": true,
	".box": true, "_tmp": true, "__pycache__": true, ".venv": true, "venv": true, "target": true, "testdata": true}

// boxRows lists the notes, maps and cards of the box by name. They come from file names alone (no file is
// read), so the walk costs one directory listing per folder and needs no cache.
func boxRows(root string) []Row {
	var rows []Row
	for _, area := range []string{"_content", "_config"} {
		_ = filepath.WalkDir(filepath.Join(root, area), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			name := d.Name()
			if d.IsDir() {
				if name == "_tmp" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".attach") {
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case strings.HasSuffix(name, ".card"):
				parts := strings.Split(strings.TrimSuffix(name, ".card"), ".")
				kind := "card"
				if len(parts) > 1 {
					kind = strings.Join(parts[1:], "-")
				}
				rows = append(rows, Row{Name: parts[0], Kind: kind, File: p, Line: 1})
			case strings.HasSuffix(name, ".md"):
				base := strings.TrimSuffix(name, ".md")
				kind := "doc"
				switch {
				case base == "MEMORY":
					kind = "router"
				case strings.HasPrefix(base, "moc-"):
					kind = "map"
				case strings.HasPrefix(base, "entity-"), strings.HasPrefix(base, "topic-"):
					kind = "note"
				}
				rows = append(rows, Row{Name: base, Kind: kind, File: p, Line: 1})
			}
			return nil
		})
	}
	return rows
}

// codeIndex is the cached declaration index of one project: per file, its fingerprint and rows.
type codeIndex struct {
	Root  string              `json:"root"`
	Files map[string]codeFile `json:"files"` // by path relative to Root
}

type codeFile struct {
	Size int64     `json:"s"`
	Mod  int64     `json:"m"`
	Rows []codeRow `json:"r,omitempty"`
}

// codeRow is a Row without its file, as the cache keeps it (the file is the entry's key).
type codeRow struct {
	Name string `json:"n"`
	Kind string `json:"k"`
	Line int    `json:"l"`
}

// codeRows returns the top-level Go, TypeScript/JavaScript and Python declarations of the project,
// reparsing only files whose size or modification time changed since the cached index under
// <box>/.box/cache/.
func (s *session) codeRows() []Row {
	if !walkable(s.project) {
		return nil
	}
	cache := filepath.Join(s.root, ".box", "cache", "names-"+hash(s.project)[:12]+".json")
	var ix codeIndex
	if data, err := os.ReadFile(cache); err == nil {
		_ = json.Unmarshal(data, &ix)
	}
	if ix.Root != s.project || ix.Files == nil {
		ix = codeIndex{Root: s.project, Files: map[string]codeFile{}}
	}
	next := codeIndex{Root: s.project, Files: map[string]codeFile{}}
	changed := false
	_ = filepath.WalkDir(s.project, func(p string, d fs.DirEntry, err error) error {
		if len(next.Files) >= maxCodeFiles {
			return fs.SkipAll // not a folder more: a cold walk of a huge tree is what stalls a prompt
		}
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != s.project && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		lang := langOf(d.Name())
		if lang == "" {
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Size() > maxCodeSize {
			return nil
		}
		rel, _ := filepath.Rel(s.project, p)
		old, ok := ix.Files[rel]
		if ok && old.Size == fi.Size() && old.Mod == fi.ModTime().UnixNano() {
			next.Files[rel] = old
			return nil
		}
		changed = true
		data, err := readRegular(p, maxCodeSize)
		if err != nil {
			return nil
		}
		var rows []codeRow
		for _, r := range declarations(lang, p, data) {
			rows = append(rows, codeRow{r.Name, r.Kind, r.Line})
		}
		next.Files[rel] = codeFile{Size: fi.Size(), Mod: fi.ModTime().UnixNano(), Rows: rows}
		return nil
	})
	if changed || len(next.Files) != len(ix.Files) {
		if data, err := json.Marshal(next); err == nil && os.MkdirAll(filepath.Dir(cache), 0o755) == nil {
			_ = writeFile(cache, data)
		}
	}
	var rows []Row
	for rel, f := range next.Files {
		file := filepath.Join(s.project, rel)
		for _, r := range f.Rows {
			rows = append(rows, Row{Name: r.Name, Kind: r.Kind, File: file, Line: r.Line})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].File != rows[j].File {
			return rows[i].File < rows[j].File
		}
		return rows[i].Line < rows[j].Line
	})
	return rows
}

// walkable reports whether a session's project is one to index: not the file system's root, nor the
// home folder or a folder above it (a session started there has no project, and a walk would read
// every file the owner has).
func walkable(dir string) bool {
	if dir == "" || filepath.Dir(dir) == dir {
		return false
	}
	if home, err := os.UserHomeDir(); err == nil && within(dir, home) {
		return false
	}
	return true
}

func langOf(name string) string {
	switch filepath.Ext(name) {
	case ".go":
		return "go"
	case ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs":
		if strings.HasSuffix(name, ".d.ts") || strings.HasSuffix(name, ".min.js") {
			return ""
		}
		return "ts"
	case ".py":
		return "py"
	}
	return ""
}

var (
	goFunc   = lazyregexp.New(`^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)`)
	goDecl   = lazyregexp.New(`^(type|var|const)\s+([A-Za-z_]\w*)`)
	goGroup  = lazyregexp.New(`^(type|var|const)\s*\($`)
	goMember = lazyregexp.New(`^\t([A-Za-z_]\w*)\b`)
	tsDecl   = lazyregexp.New(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(function\*?|class|interface|type|enum|const|let|var)\s+([A-Za-z_$][\w$]*)`)
	pyDecl   = lazyregexp.New(`^(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)`)
	pyAssign = lazyregexp.New(`^([A-Z_][A-Z0-9_]*)\s*(?::[^=]*)?=`)
)

// declarations finds the top-level declarations of one source file, line by line (no parser: a
// declaration index needs names and lines, not types).
func declarations(lang, path string, data []byte) []Row {
	var rows []Row
	group := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxCodeSize)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		add := func(kind, name string) { rows = append(rows, Row{Name: name, Kind: kind, File: path, Line: n}) }
		switch lang {
		case "go":
			if group != "" {
				if strings.HasPrefix(line, ")") {
					group = ""
				} else if m := goMember.FindStringSubmatch(line); m != nil {
					add(group, m[1])
				}
				continue
			}
			if m := goFunc.FindStringSubmatch(line); m != nil {
				add("func", m[1])
			} else if m := goGroup.FindStringSubmatch(line); m != nil {
				group = m[1]
			} else if m := goDecl.FindStringSubmatch(line); m != nil {
				add(m[1], m[2])
			}
		case "ts":
			if m := tsDecl.FindStringSubmatch(line); m != nil {
				add(strings.TrimSuffix(m[1], "*"), m[2])
			}
		case "py":
			if m := pyDecl.FindStringSubmatch(line); m != nil {
				add(m[1], m[2])
			} else if m := pyAssign.FindStringSubmatch(line); m != nil {
				add("const", m[1])
			}
		}
	}
	return rows
}

// lookup returns the rows declaring name (case-insensitively with fold), limited to files under within
// when it is not empty.
func lookup(rows []Row, name string, fold bool, within string) []Row {
	var out []Row
	for _, r := range rows {
		if r.Name == name || fold && strings.EqualFold(r.Name, name) {
			if within == "" || r.File == within || strings.HasPrefix(r.File, strings.TrimSuffix(within, "/")+"/") {
				out = append(out, r)
			}
		}
	}
	return out
}
