package connector

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Problem is one thing wrong with a bundle: where it is ("manifest.egress[2]", "files/index.mjs:3:7")
// and why, naming what was found.
type Problem struct {
	Where string `json:"where"`
	Why   string `json:"why"`
}

// Report is the answer of a check: every problem at once, and whether this box can run connectors.
type Report struct {
	OK          bool      `json:"ok"`
	BoxCanBuild bool      `json:"boxCanBuild"`
	Problems    []Problem `json:"problems"`
}

// Options are what a check needs to know of the box it runs on.
type Options struct {
	// BoxHosts are the box's own names (its public address's host); no egress entry may name or cover one.
	BoxHosts []string
	// BoxCanBuild is whether the sandbox runs on this machine (the sandbox package probes it).
	BoxCanBuild bool
}

// Bundle is a checked connector: its manifest with defaults, its files, the script the sandbox runs,
// and what a card binds.
type Bundle struct {
	Manifest     Manifest
	Files        map[string]string
	Script       string // the files bundled into one script that sets the global connectorExports
	Envelope     Envelope
	EnvelopeHash string
	FilesSHA256  string

	egress  Egress
	schemas map[string]*jsonschema.Resolved
}

// Egress is the bundle's allow-list.
func (b *Bundle) Egress() Egress { return b.egress }

// Validate checks a manifest and its files (both as JSON, as a client sends them) and answers every
// problem at once. The bundle is nil unless the report is OK. It runs no code: the files are only
// parsed and bundled.
func Validate(manifest, files []byte, opts Options) (*Bundle, Report) {
	c := &checker{opts: opts}
	m := c.manifest(manifest)
	fs := c.files(files, m.Entry)
	var script string
	if m.Entry != "" && fs != nil && fs[m.Entry] != "" && len(c.problems) == c.fileProblems {
		script = c.bundle(fs, m.Entry)
	}
	c.placeholders(fs, m)
	rep := Report{OK: len(c.problems) == 0, BoxCanBuild: opts.BoxCanBuild, Problems: c.problems}
	if rep.Problems == nil {
		rep.Problems = []Problem{}
	}
	if !rep.OK {
		return nil, rep
	}
	b := &Bundle{Manifest: m, Files: fs, Script: script, egress: m.egress(), schemas: c.schemas}
	b.Envelope = EnvelopeOf(&m)
	b.EnvelopeHash = b.Envelope.Hash()
	b.FilesSHA256 = FilesSHA256(fs)
	return b, rep
}

type checker struct {
	opts         Options
	problems     []Problem
	fileProblems int // problems counted before the files were bundled: bundling waits for a clean manifest
	schemas      map[string]*jsonschema.Resolved
}

func (c *checker) add(where, format string, a ...any) {
	c.problems = append(c.problems, Problem{Where: where, Why: fmt.Sprintf(format, a...)})
}

var (
	manifestKeys   = []string{"api", "kind", "runtime", "entry", "id", "name", "what", "emoji", "egress", "credentials", "tools", "test", "limits"}
	boxOwnedKeys   = []string{"proposedBy", "sha256", "envelopeHash"}
	credentialKeys = []string{"name", "host", "what"}
	toolKeys       = []string{"name", "description", "inputSchema", "effect"}
	testKeys       = []string{"tool", "args", "expect"}
	limitKeys      = []string{"timeoutS", "memory"}

	idRE         = lazyregexp.New(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	toolNameRE   = lazyregexp.New(`^[a-z][a-z0-9_]*$`)
	keyNameRE    = lazyregexp.New(`^[A-Za-z][A-Za-z0-9_]*$`)
	fileNameRE   = lazyregexp.New(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(/[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*)*\.(mjs|js|json)$`)
	maxIDLen     = 30 // c_<id>__<tool> stays within the 64 characters assistants allow a tool name
	maxToolLen   = 30
	maxKeyLen    = 40
	maxNameLen   = 60
	maxWhatLen   = 500
	maxEmojiLen  = 8 // runes: one emoji with its modifiers
	maxFileCount = MaxFiles
)

// object checks that n is an object whose keys are all in allowed, reporting the others.
func (c *checker) object(n *node, where string, allowed []string) bool {
	if n.kind != 'o' {
		c.add(where, "should be an object, not %s", n.kindName())
		return false
	}
	for _, k := range n.keys {
		switch {
		case slices.Contains(allowed, k):
		case where == "manifest" && slices.Contains(boxOwnedKeys, k):
			c.add(where+"."+k, "%q is the box's to set, never the sender's; leave it out", k)
		default:
			c.add(where+"."+k, "%q is not a field here; the fields are %s", k, strings.Join(allowed, ", "))
		}
	}
	return true
}

// text reads a text field; max counts characters. An absent optional field gives "".
func (c *checker) text(n *node, where string, required bool, max int) string {
	if n == nil {
		if required {
			c.add(where, "is missing")
		}
		return ""
	}
	if n.kind != 's' {
		c.add(where, "should be text, not %s", n.kindName())
		return ""
	}
	s := n.text
	if required && strings.TrimSpace(s) == "" {
		c.add(where, "is empty")
		return ""
	}
	if l := utf8.RuneCountInString(s); l > max {
		c.add(where, "is %d characters long; at most %d", l, max)
		return ""
	}
	for _, r := range s {
		if (unicode.IsControl(r) && r != '\n') || unicode.Is(unicode.Bidi_Control, r) || r == utf8.RuneError {
			c.add(where, "has the character %U, which could hide what the owner reads on the card", r)
			return ""
		}
	}
	return s
}

// integer reads a whole-number field between lo and hi, or def when absent.
func (c *checker) integer(n *node, where string, lo, hi, def int) int {
	if n == nil {
		return def
	}
	v, err := strconv.Atoi(n.text)
	if n.kind != 'n' || err != nil {
		c.add(where, "should be a whole number, not %s", describe(n))
		return def
	}
	if v < lo || v > hi {
		c.add(where, "is %d; it must be from %d to %d", v, lo, hi)
		return def
	}
	return v
}

func describe(n *node) string {
	if n.kind == 'n' || n.kind == 's' {
		return fmt.Sprintf("%q", n.text)
	}
	return n.kindName()
}

// list reads a list field (absent: none), reporting more than max items.
func (c *checker) list(n *node, where string, max int) []*node {
	if n == nil {
		return nil
	}
	if n.kind != 'a' {
		c.add(where, "should be a list, not %s", n.kindName())
		return nil
	}
	if len(n.items) > max {
		c.add(where, "has %d entries; at most %d", len(n.items), max)
		return n.items[:max]
	}
	return n.items
}

// constant checks a field that may only hold one value, filling it in when absent.
func constant[T comparable](c *checker, n *node, where string, want T) T {
	if n == nil {
		return want
	}
	var got any
	switch n.kind {
	case 'n':
		got, _ = strconv.Atoi(n.text)
	case 's':
		got = n.text
	}
	if g, ok := got.(T); !ok || g != want {
		c.add(where, "is %s; it can only be %v (or left out)", describe(n), want)
	}
	return want
}

func (c *checker) manifest(data []byte) Manifest {
	var m Manifest
	if len(data) > MaxManifestBytes {
		c.add("manifest", "is %d KB; at most %d KB", len(data)>>10, MaxManifestBytes>>10)
		return m
	}
	root, err := parseTree(data)
	if err != nil {
		c.add("manifest", "is not valid JSON: %v", err)
		return m
	}
	if !c.object(root, "manifest", manifestKeys) {
		return m
	}
	m.API = constant(c, root.get("api"), "manifest.api", API)
	m.Kind = constant(c, root.get("kind"), "manifest.kind", Kind)
	m.Runtime = constant(c, root.get("runtime"), "manifest.runtime", Runtime)
	m.Entry = Entry
	if n := root.get("entry"); n != nil {
		if e := c.text(n, "manifest.entry", true, 100); e != "" {
			if fileNameRE.MatchString(e) && path.Ext(e) != ".json" {
				m.Entry = e
			} else {
				c.add("manifest.entry", "%q is not a script file name like index.mjs", e)
			}
		}
	}
	m.Name = c.text(root.get("name"), "manifest.name", true, maxNameLen)
	m.What = c.text(root.get("what"), "manifest.what", true, maxWhatLen)
	m.Emoji = c.text(root.get("emoji"), "manifest.emoji", false, maxEmojiLen)
	if m.Emoji == "" {
		m.Emoji = Emoji
	}
	m.ID = c.id(root.get("id"), m.Name)
	m.Egress = c.egress(root.get("egress"))
	m.Credentials = c.credentials(root.get("credentials"), m.egress())
	m.Tools = c.tools(root.get("tools"))
	m.Test = c.tests(root.get("test"), &m)
	m.Limits = c.limits(root.get("limits"))
	return m
}

func (c *checker) id(n *node, name string) string {
	if n == nil {
		if name == "" {
			return ""
		}
		id := Slug(name)
		if id == "" {
			c.add("manifest.id", "the name %q gives no id; add an id like my-connector", name)
		}
		return id
	}
	id := c.text(n, "manifest.id", true, maxIDLen)
	if id != "" && !idRE.MatchString(id) {
		c.add("manifest.id", "%q is not an id: lowercase letters and digits, joined by single hyphens, like bus-times", id)
		return ""
	}
	return id
}

func (c *checker) egress(n *node) []string {
	items := c.list(n, "manifest.egress", MaxHosts)
	out := []string{}
	for i, it := range items {
		where := fmt.Sprintf("manifest.egress[%d]", i)
		h := c.text(it, where, true, 260)
		if h == "" {
			continue
		}
		if h == AnyWebsite {
			if len(items) > 1 {
				c.add(where, `"*" already means any website; list nothing beside it`)
			}
			out = append(out, h)
			continue
		}
		norm, why := parseEgressEntry(h, c.opts.BoxHosts)
		switch {
		case why != "":
			c.add(where, "%s", why)
		case slices.Contains(out, norm):
			c.add(where, "%q is listed twice", h)
		default:
			out = append(out, norm)
		}
	}
	return out
}

func (c *checker) credentials(n *node, egress Egress) []Credential {
	out := []Credential{}
	for i, it := range c.list(n, "manifest.credentials", MaxCredentials) {
		where := fmt.Sprintf("manifest.credentials[%d]", i)
		if !c.object(it, where, credentialKeys) {
			continue
		}
		cr := Credential{
			Name: c.text(it.get("name"), where+".name", true, maxKeyLen),
			Host: c.text(it.get("host"), where+".host", true, 260),
			What: c.text(it.get("what"), where+".what", false, maxWhatLen),
		}
		if cr.Name != "" && !keyNameRE.MatchString(cr.Name) {
			c.add(where+".name", "%q is not a key name: a letter, then letters, digits or _", cr.Name)
		}
		if slices.ContainsFunc(out, func(o Credential) bool { return o.Name == cr.Name }) {
			c.add(where+".name", "the key %q is declared twice", cr.Name)
		}
		if cr.Host != "" {
			h := NormalizeHost(cr.Host)
			switch {
			case strings.Contains(h, "*"):
				c.add(where+".host", "%q is a pattern; a key goes to exactly one host, like api.example.com", cr.Host)
			case !egress.Allows(h):
				c.add(where+".host", "the key goes to %q, which egress does not list", cr.Host)
			default:
				if _, why := parseEgressEntry(h, c.opts.BoxHosts); why != "" {
					c.add(where+".host", "%s", why)
				}
			}
			cr.Host = h
		}
		out = append(out, cr)
	}
	return out
}

func (c *checker) tools(n *node) []Tool {
	if n == nil {
		c.add("manifest.tools", "is missing; a connector exports at least one tool")
		return nil
	}
	items := c.list(n, "manifest.tools", MaxTools)
	if n.kind == 'a' && len(items) == 0 {
		c.add("manifest.tools", "is empty; a connector exports at least one tool")
	}
	out := []Tool{}
	for i, it := range items {
		where := fmt.Sprintf("manifest.tools[%d]", i)
		if !c.object(it, where, toolKeys) {
			continue
		}
		t := Tool{
			Name:        c.text(it.get("name"), where+".name", true, maxToolLen),
			Description: c.text(it.get("description"), where+".description", true, maxWhatLen),
		}
		if t.Name != "" && !toolNameRE.MatchString(t.Name) {
			c.add(where+".name", "%q is not a tool name: a lowercase letter, then lowercase letters, digits or _", t.Name)
		}
		if slices.ContainsFunc(out, func(o Tool) bool { return o.Name == t.Name }) {
			c.add(where+".name", "the tool %q is declared twice", t.Name)
		}
		switch e := it.get("effect"); {
		case e == nil:
			c.add(where+".effect", `is missing; say "read" or "write"`)
		case e.kind == 's' && (e.text == Read || e.text == Write):
			t.Effect = e.text
		default:
			c.add(where+".effect", `is %s; it is "read" or "write"`, describe(e))
		}
		t.InputSchema = c.schema(it.get("inputSchema"), where+".inputSchema", t.Name)
		out = append(out, t)
	}
	return out
}

// schema checks a tool's inputSchema: a JSON Schema whose root describes an object, with no reference
// outside itself. The resolved schema checks call arguments later.
func (c *checker) schema(n *node, where, tool string) json.RawMessage {
	if n == nil {
		c.add(where, `is missing; give a JSON Schema like {"type": "object", "properties": {…}}`)
		return nil
	}
	if n.kind != 'o' {
		c.add(where, "should be a JSON Schema object, not %s", n.kindName())
		return nil
	}
	if t := n.get("type"); t == nil || t.kind != 's' || t.text != "object" {
		c.add(where, `should have "type": "object" (a tool takes named arguments)`)
		return nil
	}
	raw, _ := n.MarshalJSON()
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		c.add(where, "is not a JSON Schema: %v", err)
		return nil
	}
	r, err := s.Resolve(nil)
	if err != nil {
		c.add(where, "is not a usable JSON Schema: %v", err)
		return nil
	}
	if c.schemas == nil {
		c.schemas = map[string]*jsonschema.Resolved{}
	}
	c.schemas[tool] = r
	return raw
}

func (c *checker) tests(n *node, m *Manifest) []Test {
	out := []Test{}
	items := c.list(n, "manifest.test", MaxTests)
	for i, it := range items {
		where := fmt.Sprintf("manifest.test[%d]", i)
		if !c.object(it, where, testKeys) {
			continue
		}
		t := Test{Tool: c.text(it.get("tool"), where+".tool", true, maxToolLen), Args: json.RawMessage("{}")}
		tool := m.Tool(t.Tool)
		switch {
		case t.Tool == "":
		case tool == nil:
			c.add(where+".tool", "%q is not one of the tools", t.Tool)
		case tool.Effect == Write:
			c.add(where+".tool", "%q writes; a test calls only tools that read, so approving never acts as the owner", t.Tool)
		}
		if a := it.get("args"); a != nil {
			if a.kind != 'o' {
				c.add(where+".args", "should be an object of arguments, not %s", a.kindName())
			} else {
				t.Args, _ = a.MarshalJSON()
				if tool != nil && c.schemas[tool.Name] != nil {
					if err := checkArgs(c.schemas[tool.Name], t.Args); err != nil {
						c.add(where+".args", "do not fit %s's inputSchema: %v", t.Tool, err)
					}
				}
			}
		}
		e, why := parseExpect(it.get("expect"))
		if why != "" {
			c.add(where+".expect", "%s", why)
		}
		t.Expect = e
		out = append(out, t)
	}
	if len(out) == 0 && (n == nil || n.kind == 'a') && slices.ContainsFunc(m.Tools, func(t Tool) bool { return t.Effect == Read }) {
		c.add("manifest.test", "is missing; give at least one test that calls a tool that reads, like {\"tool\": \"%s\", \"args\": {…}, \"expect\": \"nonempty\"}", firstRead(m.Tools))
	}
	return out
}

func firstRead(tools []Tool) string {
	for _, t := range tools {
		if t.Effect == Read {
			return t.Name
		}
	}
	return ""
}

func (c *checker) limits(n *node) Limits {
	l := Limits{TimeoutS: DefaultTimeoutS, Memory: DefaultMemoryMB}
	if n == nil || !c.object(n, "manifest.limits", limitKeys) {
		return l
	}
	l.TimeoutS = c.integer(n.get("timeoutS"), "manifest.limits.timeoutS", 1, MaxTimeoutS, DefaultTimeoutS)
	l.Memory = c.integer(n.get("memory"), "manifest.limits.memory", MinMemoryMB, MaxMemoryMB, DefaultMemoryMB)
	return l
}

// files checks the files object: names, kinds, sizes and the entry.
func (c *checker) files(data []byte, entry string) map[string]string {
	defer func() { c.fileProblems = len(c.problems) }()
	if len(data) > 2*MaxBundleBytes+1024 {
		c.add("files", "are %d KB; at most %d KB in all", len(data)>>10, MaxBundleBytes>>10)
		return nil
	}
	root, err := parseTree(data)
	if err != nil {
		c.add("files", "is not valid JSON: %v", err)
		return nil
	}
	if root.kind != 'o' {
		c.add("files", `should be an object of file name → text, like {"index.mjs": "export const tools = …"}`)
		return nil
	}
	out := map[string]string{}
	total := 0
	for i, name := range root.keys {
		v := root.vals[i]
		switch {
		case !fileNameRE.MatchString(name) || strings.Contains(name, ".."):
			c.add("files/"+name, "%q is not a file name the bundle may hold: letters, digits, - and _, folders with /, ending .mjs, .js or .json", name)
			continue
		case v.kind != 's':
			c.add("files/"+name, "should be the file's text, not %s", v.kindName())
			continue
		}
		out[name] = v.text
		total += len(v.text)
	}
	if len(root.keys) > maxFileCount {
		c.add("files", "has %d files; at most %d", len(root.keys), maxFileCount)
	}
	if total > MaxBundleBytes {
		c.add("files", "hold %d KB; at most %d KB in all", (total+1023)>>10, MaxBundleBytes>>10)
	}
	if entry != "" && root.get(entry) == nil {
		c.add("files", "has no %s; it is the connector's entry and exports tools", entry)
	} else if entry != "" && strings.TrimSpace(out[entry]) == "" {
		c.add("files/"+entry, "is empty; it exports tools")
	}
	return out
}

// placeholders reports a placeholder, written in the files, for a key the manifest does not declare.
func (c *checker) placeholders(files map[string]string, m Manifest) {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		seen := map[string]bool{}
		for _, k := range PlaceholderNames(files[name]) {
			if seen[k] || slices.ContainsFunc(m.Credentials, func(cr Credential) bool { return cr.Name == k }) {
				continue
			}
			seen[k] = true
			c.add("files/"+name, "uses %s, but credentials declare no key %q", Placeholder(k), k)
		}
	}
}
