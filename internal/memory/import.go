package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/imports"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/markdoc"
	"github.com/boxmem/box/internal/say"
	"github.com/boxmem/box/internal/secret"
)

// An import brings what another memory held into this one (docs/IMPORTS.md): facts become inbox lines
// in the owner's own words (trust own, via import, who "import <kind>"), each with its provenance
// sub-line; documents go under /_content/imports/<folder>/. The whole import is one change: one commit,
// one diary entry, one undo.
//
// Rules, in order, for every item the source streams:
//
//  1. A line is checked as remember checks a fact (secret.CheckRemember): a refused line is left out and
//     counted with its place in the source, never its text. A document's text is checked line by line
//     with secret.Secret; a secret-like line is replaced by a marker, counted the same way.
//  2. The import record (/_bookkeeping/imports/<kind>.jsonl) keeps, per entry the source named, a hash
//     of its identity and of its content. An entry whose content is recorded already adds nothing; one
//     whose content changed adds the change (a new line; a document is rewritten in place).
//  3. A document the box's validation would refuse (say, a frontmatter type: that is one of the box's
//     card types, without that type's fields) is left out with the finding, so one odd note never
//     blocks the rest.
//  4. Nothing is written on a dry run; the result says what would come in.

// ImportInput is one import.
type ImportInput struct {
	Kind   string // one of imports.Kinds: a line's who is "import <kind>"
	Source string // the source's name (its file or folder), for the summary
	Folder string // the folder under /_content/imports/ its documents go to
	// Path is the source on the host (imports.Source.Path). An import never reads the box itself: a
	// source inside the box, or a folder that holds it, is refused before anything is read.
	Path   string
	DryRun bool
	// Read streams the source's items (imports.Source.Read).
	Read func(ctx context.Context, emit func(imports.Item) error) error
	// Progress hears how many items were read so far (total 0: not known yet), then the last call has
	// done == total when reading is over.
	Progress func(done, total int)
	// Extract, when set, proposes facts from a document (a conversation) as lines; they go through the
	// same rules as the source's own lines. Nil, the default, proposes none: reading facts out of
	// conversations needs a brain and the owner asking for it (docs/IMPORTS.md).
	Extract func(ctx context.Context, d imports.Doc) ([]imports.Line, error)
}

// ImportResult says what came in, or on a dry run what would.
type ImportResult struct {
	Kind      string         `json:"kind"`
	Source    string         `json:"source"`
	DryRun    bool           `json:"dryRun,omitempty"`
	Lines     int            `json:"lines"`     // lines added to the inbox
	Changed   int            `json:"changed"`   // of those, changes to entries imported before
	Documents int            `json:"documents"` // documents and attachments written (new or changed)
	Unchanged int            `json:"unchanged"` // entries already in the box as they are
	Refused   int            `json:"refused"`   // lines left out, and secret-like lines of documents blanked
	Places    []string       `json:"refusedAt,omitempty"`
	Skipped   []imports.Skip `json:"skipped,omitempty"` // entries left out, with where and why
	// Beside lists the documents written next to a file the box holds at their place that this import
	// did not leave as it is (the owner's edit, another source's document): that file is kept.
	Beside []string `json:"beside,omitempty"`
	Sample []string `json:"sample,omitempty"` // the first lines and documents that come in
	Entry  string   `json:"entry,omitempty"`  // the diary entry, for undo
	Text   string   `json:"text"`
}

// Imported reports whether anything new came in (or would, on a dry run).
func (r ImportResult) Imported() bool { return r.Lines+r.Documents > 0 }

// importRecordDir holds one record per kind of import; importsDir holds the documents.
const (
	importRecordDir = "/_bookkeeping/imports"
	importsDir      = "/_content/imports"
)

// maxRefusedPlaces bounds the places a result lists (the count stays exact).
const maxRefusedPlaces = 200

// importLine and importDoc are items ready to write, with their record entries.
type importLine struct {
	date string
	line inbox.Line
	rec  recordEntry
}

type importDoc struct {
	path string
	data []byte
	rec  recordEntry
}

// recordEntry is one line of an import record: hashes only, so the record never repeats a source's text.
type recordEntry struct {
	Key string `json:"key"`          // hash of the kind and the entry's identity
	Sum string `json:"sum"`          // hash of its content as imported
	To  string `json:"to"`           // where it went: the inbox day#line id, or the document's box path
	At  string `json:"at,omitempty"` // the day it came in
}

// Import reads in.Read's items and writes what is new as one change.
func (m *Memory) Import(ctx context.Context, a Actor, in ImportInput) (ImportResult, error) {
	const op = "memory.import"
	if !slices.Contains(imports.Kinds, in.Kind) {
		return ImportResult{}, errs.E(op, errs.Usage, "%q is not a kind of import; use one of %s.", in.Kind, strings.Join(imports.Kinds, ", "))
	}
	if err := m.outsideBox(in.Path); err != nil {
		return ImportResult{}, err
	}
	if in.Folder == "" {
		in.Folder = in.Kind
	}
	if in.Progress == nil {
		in.Progress = func(int, int) {}
	}
	a = normalize(a)
	now := m.now()
	p := &importPrep{ctx: ctx, m: m, in: in, now: now, res: ImportResult{Kind: in.Kind, Source: in.Source, DryRun: in.DryRun}, seen: map[string]bool{}}
	var err error
	if p.record, err = readRecord(diskView{m}, in.Kind); err != nil {
		return ImportResult{}, err
	}
	n := 0
	if err := in.Read(ctx, func(it imports.Item) error {
		n++
		if n%500 == 0 {
			in.Progress(n, 0)
		}
		return p.item(it)
	}); err != nil {
		return ImportResult{}, err
	}
	in.Progress(n, n)
	res := p.res
	if in.DryRun || !res.Imported() {
		res.Text = p.summary(true)
		return res, nil
	}
	summary := p.summary(false)
	r, err := m.box.Do(ctx, box.Change{Actor: a, Op: "import", Switch: "change", Summary: summary, Reason: p.reason(),
		Apply: func(tx *box.Tx) error { return p.apply(tx) }})
	if err != nil {
		return ImportResult{}, err
	}
	res = p.res
	res.Entry, res.Text = r.EntryID, p.summary(false)
	return res, nil
}

// outsideBox refuses a source inside the box (its tree, .git, .box) or a folder that holds the box:
// importing the box into itself would read its runtime files and write its own notes back as
// documents. Links are resolved first, so a link to the box is refused too.
func (m *Memory) outsideBox(p string) error {
	const op = "memory.import"
	if p == "" {
		return errs.E(op, errs.Usage, "An import needs the path of its source.")
	}
	abs, err := filepath.Abs(p)
	if err == nil {
		if r, e := filepath.EvalSymlinks(abs); e == nil {
			abs = r
		}
	}
	root := m.root
	if r, e := filepath.EvalSymlinks(root); e == nil {
		root = r
	}
	within := func(base, p string) bool {
		rel, err := filepath.Rel(base, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	switch {
	case err != nil:
		return errs.Wrap(op, errs.Invalid, err, "The path to import cannot be read")
	case within(root, abs):
		return errs.E(op, errs.Invalid, "%s is inside the box; an import brings memories from elsewhere. Export the box instead (`box export`), or import a copy kept outside it.", p)
	case within(abs, root):
		return errs.E(op, errs.Invalid, "%s holds the box itself (inside the box is %s); import a folder that does not, or move the box out of it.", p, m.root)
	}
	return nil
}

// importPrep holds one import between reading and writing.
type importPrep struct {
	ctx    context.Context
	m      *Memory
	in     ImportInput
	now    time.Time
	record map[string]recordEntry
	seen   map[string]bool // keys met in this import
	lines  []importLine
	docs   []importDoc
	kept   int64         // bytes of docs' data: at most maxKept
	read   []recordEntry // documents the brain read for facts (Extract), recorded with the import
	res    ImportResult
}

// maxKept bounds the documents and attachments one import holds in memory until its one commit (a dry
// run counts them and holds none): a small zip of large attachments would otherwise hold gigabytes
// (docs/IMPORTS.md, "Limits"). A variable so tests can lower it.
var maxKept int64 = 512 << 20

func (p *importPrep) refuse(where string) {
	p.res.Refused++
	if len(p.res.Places) < maxRefusedPlaces {
		p.res.Places = append(p.res.Places, where)
	}
}

func (p *importPrep) sample(s string) {
	if len(p.res.Sample) < 10 {
		p.res.Sample = append(p.res.Sample, s)
	}
}

// fresh applies rule 2: it reports whether the entry is new or changed, and counts it otherwise.
func (p *importPrep) fresh(key, sum string) (changed, ok bool) {
	if p.seen[key] {
		p.res.Unchanged++
		return false, false
	}
	p.seen[key] = true
	old, had := p.record[key]
	if had && old.Sum == sum {
		p.res.Unchanged++
		return false, false
	}
	return had, true
}

func (p *importPrep) item(it imports.Item) error {
	switch {
	case it.Line != nil:
		return p.line(*it.Line)
	case it.Doc != nil:
		return p.doc(*it.Doc)
	}
	return nil
}

func (p *importPrep) line(l imports.Line) error {
	text := strings.TrimSpace(l.Text)
	if err := secret.CheckRemember(text); err != nil {
		p.refuse(l.Where + ": " + err.Error())
		return nil
	}
	if l.Block != "" && l.Block != text {
		if _, found := secret.Secret(l.Block); found {
			p.refuse(l.Where + ": the observation it was split from holds something secret-like, so none of its lines come in")
			return nil
		}
	}
	key, sum := hashOf(p.in.Kind, l.Key), hashOf(text)
	changed, ok := p.fresh(key, sum)
	if !ok {
		return nil
	}
	at := p.now
	if !l.Time.IsZero() {
		at = l.Time.In(p.now.Location())
	}
	il := inbox.Line{ID: inbox.NewID(), Time: at.Format("15:04:05"), Who: "import " + p.in.Kind, Via: "import", Trust: inbox.Own, Text: text,
		Source: inbox.Source{File: oneLine(l.File), ID: oneLine(l.ID), Entity: oneLine(l.Entity), Type: oneLine(l.Type)}}
	if il.Source.Entity == "" {
		il.Source.Type = ""
	}
	if err := il.Validate(); err != nil {
		p.res.Skipped = append(p.res.Skipped, imports.Skip{Where: l.Where, Why: err.Error()})
		return nil
	}
	date := at.Format("2006-01-02")
	p.lines = append(p.lines, importLine{date: date, line: il, rec: recordEntry{Key: key, Sum: sum, At: p.now.Format("2006-01-02")}})
	p.res.Lines++
	if changed {
		p.res.Changed++
	}
	p.sample(text)
	return nil
}

// secretName reports whether a path's names, read as words ("wifi-password-is-Tr0ub4dor"), look like
// they hold a secret. A name is a program's (an id, a hash): a long random string alone is not a key.
func secretName(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		words := strings.NewReplacer("-", " ", "_", " ").Replace(strings.TrimSuffix(seg, path.Ext(seg)))
		if _, found := secret.Stored(words); found {
			return true
		}
		if _, found := secret.Stored(seg); found {
			return true
		}
	}
	return false
}

// secretMarker replaces a document's secret-like line; in its frontmatter a YAML comment does, so the
// frontmatter still parses.
const (
	secretMarker      = "*[a line left out on import: it looked like a password, key or card number]*"
	secretFrontMarker = "# a line left out on import: it looked like a password, key or card number"
)

func (p *importPrep) doc(d imports.Doc) error {
	bp, err := layout.Clean(path.Join(importsDir, p.in.Folder, d.Path))
	reserved := false
	if err == nil {
		_, reserved = layout.ReservedOffender(bp)
	}
	if err != nil || reserved || !strings.HasPrefix(bp, importsDir+"/") {
		p.res.Skipped = append(p.res.Skipped, imports.Skip{Where: d.Where, Why: "its path cannot be a box path; rename it to import it"})
		return nil
	}
	// A name is kept where lines are not blanked: the tree, git and the diary's paths.
	if secretName(strings.TrimPrefix(bp, importsDir+"/")) {
		p.res.Skipped = append(p.res.Skipped, imports.Skip{Where: d.Where, Why: "its name looks like it holds a password, key or card number; rename it to import it"})
		return nil
	}
	key := hashOf(p.in.Kind, d.Key)
	if old, had := p.record[key]; had && importedPath(old.To) {
		bp = old.To // a changed document is rewritten where it went the first time, checked there below
	}
	data := d.Data
	if d.Binary {
		if at, found := attachmentSecret(data); found {
			p.refuse(fmt.Sprintf("%s %s: an attachment with a secret-like line was left out", d.Where, at))
			return nil
		}
	} else {
		data = p.blankSecrets(d.Where, data)
		if fs := p.m.box.Refusals([]string{bp}, map[string][]byte{bp: data}); len(fs) > 0 {
			p.res.Skipped = append(p.res.Skipped, imports.Skip{Where: d.Where, Why: "the box would refuse it as " + bp + ": " + fs[0].Message + "; fix it in the source and import again"})
			return nil
		}
	}
	sum := hashOf(string(data))
	if !d.Binary {
		if err := p.extract(d, data, sum); err != nil {
			return err
		}
	}
	if _, ok := p.fresh(key, sum); !ok {
		return nil
	}
	if p.kept += int64(len(data)); p.kept > maxKept {
		return errs.E("memory.import", errs.Limited, "%s holds more than %d MiB of documents and attachments to keep, which an import holds until its one commit; nothing was imported. Import it in parts (a folder at a time, or an export cut into several).", p.in.Source, maxKept>>20)
	}
	if p.in.DryRun {
		data = nil // a dry run writes nothing: what it would keep is only counted
	}
	p.docs = append(p.docs, importDoc{path: bp, data: data, rec: recordEntry{Key: key, Sum: sum, To: bp, At: p.now.Format("2006-01-02")}})
	p.res.Documents++
	p.sample(bp)
	return nil
}

// importedPath reports whether to, read from an import's record (a file in the box anyone who writes the
// box may edit), is a path an import writes: clean, under the imports folder, no reserved name below it
// and no _tmp (git ignores it).
func importedPath(to string) bool {
	clean, err := layout.Clean(to)
	if err != nil || clean != to || !strings.HasPrefix(clean, importsDir+"/") || slices.Contains(layout.Segments(clean), "_tmp") {
		return false
	}
	_, reserved := layout.ReservedOffender(clean)
	return !reserved
}

// extract proposes facts from a document (a conversation) when the owner asked (ImportInput.Extract),
// once per version of it: the record keeps that it was read, so importing the same export again reads
// nothing twice, and a conversation imported before without --extract is read now. The document given
// is the one the box keeps, secret-like lines already blanked, so no secret goes to the brain.
func (p *importPrep) extract(d imports.Doc, data []byte, sum string) error {
	if p.in.Extract == nil {
		return nil
	}
	key := hashOf(p.in.Kind, "extract", d.Key)
	if old, had := p.record[key]; (had && old.Sum == sum) || p.seen[key] {
		return nil
	}
	p.seen[key] = true
	d.Data = data
	lines, err := p.in.Extract(p.ctx, d)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if l.File == "" {
			l.File, l.Where = d.File, d.Where
		}
		if l.ID == "" {
			l.ID = d.ID + ", proposed: " + hashOf(l.Text)[:8]
		}
		if l.Key == "" {
			l.Key = "extract\x00" + d.Key + "\x00" + l.Text
		}
		if err := p.line(l); err != nil {
			return err
		}
	}
	p.read = append(p.read, recordEntry{Key: key, Sum: sum, At: p.now.Format("2006-01-02")})
	return nil
}

// blankSecrets applies rule 1 to a document: each secret-like line becomes the marker.
func (p *importPrep) blankSecrets(where string, data []byte) []byte {
	lines := strings.Split(string(data), "\n")
	blanked := map[int]bool{}
	blank := func(i int, front bool) {
		lines[i] = secretMarker
		if front {
			lines[i] = secretFrontMarker
		}
		blanked[i] = true
	}
	front := len(lines) > 0 && markdoc.IsFrontDelimiter(lines[0])
	for i, l := range lines {
		if front && i > 0 && markdoc.IsFrontDelimiter(l) {
			front = false
			continue
		}
		if _, found := secret.Secret(l); found {
			blank(i, front)
			p.refuse(fmt.Sprintf("%s line %d: %s", where, i+1, "a secret-like line of the document was left out"))
		}
	}
	// A secret split over two lines (a label, then its value on the next) is one: both lines go.
	front = len(lines) > 0 && markdoc.IsFrontDelimiter(lines[0])
	for i := 0; i+1 < len(lines); i++ {
		if front && i > 0 && markdoc.IsFrontDelimiter(lines[i]) {
			front = false
			continue
		}
		a, b := strings.TrimSpace(lines[i]), strings.TrimSpace(lines[i+1])
		if a == "" || b == "" || blanked[i] || blanked[i+1] || b == "---" {
			continue
		}
		if _, found := secret.Secret(a + " " + b); found {
			blank(i, front)
			blank(i+1, front)
			p.refuse(fmt.Sprintf("%s lines %d–%d: %s", where, i+1, i+2, "a secret-like pair of lines of the document was left out"))
			i++
		}
	}
	if len(blanked) == 0 {
		return data
	}
	return []byte(strings.Join(lines, "\n"))
}

// attachmentSecret looks for a secret in an attachment: line by line when it is text, else in the runs
// of printable characters a binary file carries (metadata, an unpacked PDF's text). It returns where
// ("line 3", "byte 120").
func attachmentSecret(data []byte) (string, bool) {
	if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		lines := strings.Split(string(data), "\n")
		for i, l := range lines {
			if _, found := secret.Secret(l); found {
				return fmt.Sprintf("line %d", i+1), true
			}
		}
		for i, l := range lines {
			if i+1 < len(lines) {
				if _, found := secret.Secret(strings.TrimSpace(l) + " " + strings.TrimSpace(lines[i+1])); found {
					return fmt.Sprintf("lines %d–%d", i+1, i+2), true
				}
			}
		}
		return "", false
	}
	start := -1
	for i := 0; i <= len(data); i++ {
		if i < len(data) && data[i] >= 0x20 && data[i] < 0x7f {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= minPrintableRun {
			if _, found := secret.Secret(string(data[start:i])); found {
				return fmt.Sprintf("byte %d", start), true
			}
		}
		start = -1
	}
	return "", false
}

// minPrintableRun is the shortest run of printable bytes in a binary attachment worth checking: shorter
// ones are noise, and no key is shorter.
const minPrintableRun = 16

// apply writes the import inside the change: the lines (a day going on in its next part past
// inbox.MaxFileBytes), the documents and the record. Entries another import recorded meanwhile are
// dropped here, so two imports of the same file at once add it once.
func (p *importPrep) apply(tx *box.Tx) error {
	rec, err := readRecord(tx, p.in.Kind)
	if err != nil {
		return err
	}
	known := func(e recordEntry) bool { old, ok := rec[e.Key]; return ok && old.Sum == e.Sum }
	type dayState struct {
		path string
		n    int
		data []byte
	}
	days := map[string]*dayState{}
	var order []string
	lines, docs := 0, 0
	for _, il := range p.lines {
		if known(il.rec) {
			continue
		}
		d := days[il.date]
		if d == nil {
			d = &dayState{n: 1}
			for tx.Exists(layout.InboxDir + "/" + inbox.FileName(il.date, d.n+1)) {
				d.n++
			}
			d.path = layout.InboxDir + "/" + inbox.FileName(il.date, d.n)
			if d.data, err = readOr(tx, d.path, nil); err != nil {
				return err
			}
			days[il.date] = d
			order = append(order, il.date)
		}
		if len(d.data) >= inbox.MaxFileBytes {
			if err := tx.Write(d.path, d.data); err != nil {
				return err
			}
			d.n++
			d.path, d.data = layout.InboxDir+"/"+inbox.FileName(il.date, d.n), nil
		}
		if d.data, err = inbox.AppendLine(d.data, il.date, il.line); err != nil {
			return err
		}
		il.rec.To = d.path + "#" + il.line.ID
		rec[il.rec.Key] = il.rec
		lines++
	}
	for _, date := range order {
		if err := tx.Write(days[date].path, days[date].data); err != nil {
			return err
		}
	}
	for _, d := range p.docs {
		if known(d.rec) {
			continue
		}
		to, err := p.placeFor(tx, d, rec)
		if err != nil {
			return err
		}
		if err := tx.Write(to, d.data); err != nil {
			return err
		}
		d.rec.To = to
		rec[d.rec.Key] = d.rec
		docs++
	}
	if lines+docs == 0 {
		return errs.E("memory.import", errs.Conflict, "Everything in this import came in meanwhile through another import; nothing is left to add.")
	}
	for _, e := range p.read {
		e.To = "extract"
		rec[e.Key] = e
	}
	p.res.Lines, p.res.Documents = lines, docs
	return writeRecord(tx, p.in.Kind, rec)
}

// placeFor is where a document goes: its path, unless the box holds there a file this import did not
// leave as it is (edited in the box since, or another source's document under the same name); that
// file is kept and the document goes beside it, name-2.md, name-3.md …
func (p *importPrep) placeFor(tx *box.Tx, d importDoc, rec map[string]recordEntry) (string, error) {
	if !tx.Exists(d.path) {
		return d.path, nil
	}
	cur, err := tx.Read(d.path)
	if err != nil {
		return "", err
	}
	old, had := rec[d.rec.Key]
	if bytes.Equal(cur, d.data) || had && hashOf(string(cur)) == old.Sum { // as this import last wrote it
		return d.path, nil
	}
	ext := path.Ext(d.path)
	for n := 2; ; n++ {
		beside := fmt.Sprintf("%s-%d%s", strings.TrimSuffix(d.path, ext), n, ext)
		if !tx.Exists(beside) {
			p.res.Beside = append(p.res.Beside, beside)
			return beside, nil
		}
	}
}

func (p *importPrep) summary(preview bool) string {
	r := p.res
	var parts []string
	if r.Lines > 0 {
		s := fmt.Sprintf("%d %s for the inbox", r.Lines, say.Plural(r.Lines, "line", "lines"))
		if r.Changed > 0 {
			s += fmt.Sprintf(" (%d changed since the last import)", r.Changed)
		}
		parts = append(parts, s)
	}
	if r.Documents > 0 {
		parts = append(parts, fmt.Sprintf("%d %s under %s/%s/", r.Documents, say.Plural(r.Documents, "document", "documents"), importsDir, p.in.Folder))
	}
	what := strings.Join(parts, " and ")
	var s string
	switch {
	case what == "" && r.Unchanged > 0:
		s = fmt.Sprintf("Nothing new in %s: its %d %s already in the box.", r.Source, r.Unchanged, say.Plural(r.Unchanged, "entry is", "entries are"))
	case what == "":
		s = fmt.Sprintf("Nothing to import from %s.", r.Source)
	case preview && r.DryRun:
		s = fmt.Sprintf("Would import from %s: %s.", r.Source, what)
	default:
		s = fmt.Sprintf("Imported from %s (%s): %s.", r.Source, p.in.Kind, what)
	}
	if r.Unchanged > 0 && what != "" {
		s += fmt.Sprintf(" %d already in the box.", r.Unchanged)
	}
	if r.Refused > 0 {
		s += fmt.Sprintf(" %d left out as secret-like or not one fact (places listed, never the text).", r.Refused)
	}
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf(" %d skipped (listed with why).", len(r.Skipped))
	}
	if len(r.Beside) > 0 {
		s += fmt.Sprintf(" %d written beside a file of the same name that changed in the box, which is kept (listed).", len(r.Beside))
	}
	return s
}

// reason is the diary's reason: the counts of what was left out, never its text.
func (p *importPrep) reason() string {
	if p.res.Refused == 0 && len(p.res.Skipped) == 0 {
		return ""
	}
	return fmt.Sprintf("left out: %d secret-like or not one fact, %d skipped", p.res.Refused, len(p.res.Skipped))
}

// readRecord reads a kind's import record; a line that does not parse is ignored (the entry imports again).
func readRecord(v View, kind string) (map[string]recordEntry, error) {
	data, err := readOr(v, recordPath(kind), nil)
	if err != nil {
		return nil, err
	}
	out := map[string]recordEntry{}
	for _, l := range strings.Split(string(data), "\n") {
		var e recordEntry
		if json.Unmarshal([]byte(l), &e) == nil && e.Key != "" {
			out[e.Key] = e
		}
	}
	return out, nil
}

func writeRecord(tx *box.Tx, kind string, rec map[string]recordEntry) error {
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		line, _ := json.Marshal(rec[k])
		b.Write(line)
		b.WriteByte('\n')
	}
	return tx.Write(recordPath(kind), []byte(b.String()))
}

func recordPath(kind string) string { return importRecordDir + "/" + kind + ".jsonl" }

// hashOf is a short SHA-256 of its parts: 16 bytes, enough that two entries never share one.
func hashOf(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// oneLine folds white space for a provenance field.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
