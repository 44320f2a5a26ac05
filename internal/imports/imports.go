// Package imports owns reading the memories people bring from elsewhere (the reference MCP memory
// server's JSONL graph, a basic-memory project, a mem0/OpenMemory export, the ChatGPT and Claude data
// exports, a folder of Markdown) as a stream of items: facts for the inbox and documents to keep. Every
// source is untrusted input, read as a stream with limits (docs/IMPORTS.md). It reads only the source it
// is given and never touches a box: writing the items is the memory's (memory.Import).
package imports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/boxmem/box/internal/errs"
)

// Kinds of source, as `box import KIND` names them.
const (
	ServerMemory = "server-memory"
	BasicMemory  = "basic-memory"
	Mem0         = "mem0"
	ChatGPT      = "chatgpt"
	Claude       = "claude"
	Markdown     = "markdown"
)

// Kinds lists every kind, in the order the docs show them.
var Kinds = []string{ServerMemory, BasicMemory, Mem0, ChatGPT, Claude, Markdown}

// Item is one thing a source brings: a Line for the inbox, or a Doc to keep under
// /_content/imports/<folder>/.
type Item struct {
	Line *Line
	Doc  *Doc
}

// Line is one fact for the inbox.
type Line struct {
	Text   string
	Time   time.Time // the entry's own time; zero means the time of the import
	File   string    // the file inside the source it came from ("memory.jsonl")
	ID     string    // its own id there, as a person reads it ("entity Leo, observation 3")
	Key    string    // what makes it the same entry next time (default: ID); its Text tells a change
	Entity string    // the subject the source names, for tidy
	Type   string    // the subject's type in the source ("person"), a hint for tidy
	Where  string    // where to look in the source, for reports ("memory.jsonl line 12")
	// Block is the whole observation this line was split from, when it was (a saved memory's bullet
	// running over lines, split into sentences): the import checks it for secrets as one, so a label
	// on one line and its value on the next are caught together.
	Block string
}

// Doc is one document to keep: a conversation, a note's prose, a Markdown file or an attachment.
type Doc struct {
	Path   string // slash-separated, relative to the import's folder under /_content/imports/
	Data   []byte
	Binary bool   // an attachment: kept byte for byte, never scanned line by line
	File   string // provenance, as on a Line
	ID     string
	Key    string // what makes it the same document next time (default: ID)
	Where  string
}

// Skip is an entry a source left out on purpose, with where it is and why (a symlink, a reserved name,
// an attachment over the size limit); the import goes on without it.
type Skip struct {
	Where string `json:"where"`
	Why   string `json:"why"`
}

// Options bound what a source may hold; zero values take the defaults below.
type Options struct {
	MaxLine  int64 // one JSONL line
	MaxEntry int64 // one file, or one zip entry once decompressed
	MaxTotal int64 // everything read from one source, decompressed
	MaxDoc   int   // one document part; longer conversations go on in part 2, 3 …
	MaxFiles int   // files in a Markdown folder
	MaxRatio int64 // decompressed/compressed size of a zip entry past which it is a bomb
	Progress func(done, total int64)
	Skipped  func(Skip)
	Zone     *time.Location // the owner's time zone, for dates in documents; nil = UTC
}

func (o Options) zone() *time.Location {
	if o.Zone == nil {
		return time.UTC
	}
	return o.Zone
}

// Defaults, documented in docs/IMPORTS.md.
const (
	DefaultMaxLine  = 16 << 20
	DefaultMaxEntry = 1 << 30
	DefaultMaxTotal = 4 << 30
	DefaultMaxDoc   = 1 << 20
	DefaultMaxFiles = 50000
	DefaultMaxRatio = 200
	// MaxFolderFile bounds one file of a Markdown folder, a note or an attachment: bigger ones are skipped
	// and reported. An import holds its documents until its one commit, so a note is not a gigabyte.
	MaxFolderFile = 20 << 20
)

func (o Options) withDefaults() Options {
	set := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.MaxLine, DefaultMaxLine)
	set(&o.MaxEntry, DefaultMaxEntry)
	set(&o.MaxTotal, DefaultMaxTotal)
	set(&o.MaxRatio, DefaultMaxRatio)
	if o.MaxDoc <= 0 {
		o.MaxDoc = DefaultMaxDoc
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Progress == nil {
		o.Progress = func(int64, int64) {}
	}
	if o.Skipped == nil {
		o.Skipped = func(Skip) {}
	}
	return o
}

// Source is one thing to import, opened and checked.
type Source struct {
	Kind   string
	Path   string // the host path given
	Name   string // its base name, for provenance and reports
	Folder string // the folder under /_content/imports/ its documents go to
	opts   Options
}

// Open checks that path exists and can be a source of kind; reading happens in Read.
func Open(kind, path string, opts Options) (*Source, error) {
	const op = "imports.open"
	known := false
	for _, k := range Kinds {
		known = known || k == kind
	}
	if !known {
		return nil, errs.E(op, errs.Usage, "%q is not a kind of import; use one of %s.", kind, strings.Join(Kinds, ", "))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, "The path to import cannot be read")
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, errs.E(op, errs.NotFound, "There is nothing at %s to import; check the path.", path)
	}
	s := &Source{Kind: kind, Path: abs, Name: filepath.Base(abs), opts: opts.withDefaults(), Folder: kind}
	if kind == Markdown {
		s.Folder = Slug(strings.TrimSuffix(s.Name, filepath.Ext(s.Name)))
		if s.Folder == "" {
			s.Folder = "markdown"
		}
	}
	return s, nil
}

// Read streams the source's items to emit, in source order. An error from emit stops it. Malformed
// input is an Invalid error naming the file, the line or entry, and what to do; nothing has been
// written by then (emit only collects).
func (s *Source) Read(ctx context.Context, emit func(Item) error) error {
	r := &reader{ctx: ctx, src: s, emit: emit, opts: s.opts}
	err := r.read()
	if n := r.skipped - MaxSkips; n > 0 {
		s.opts.Skipped(Skip{Where: s.Name, Why: fmt.Sprintf("%d more entries were left out as well; only the first %d are listed", n, MaxSkips)})
	}
	return err
}

func (r *reader) read() error {
	s := r.src
	switch s.Kind {
	case ServerMemory:
		return r.serverMemory()
	case Mem0:
		return r.mem0()
	case BasicMemory:
		return r.basicMemory()
	case ChatGPT:
		return r.chatGPT()
	case Claude:
		return r.claude()
	case Markdown:
		return r.markdown()
	}
	return errs.E("imports.read", errs.Usage, "%q is not a kind of import.", s.Kind)
}

// reader carries one Read.
type reader struct {
	ctx     context.Context
	src     *Source
	emit    func(Item) error
	opts    Options
	done    int64 // bytes read, for progress
	all     int64 // bytes to read, as far as known
	total   int64 // bytes read in all, against MaxTotal
	skipped int   // entries skipped, listed up to MaxSkips
}

func (r *reader) line(l Line) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	l.Text = oneLine(l.Text)
	if l.Text == "" {
		return nil
	}
	if l.Key == "" {
		l.Key = l.ID
	}
	return r.emit(Item{Line: &l})
}

func (r *reader) doc(d Doc) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if d.Key == "" {
		d.Key = d.ID
	}
	return r.emit(Item{Doc: &d})
}

// MaxSkips is how many skipped entries one source lists; past it they are counted and named once at
// the end, so an archive of a million unsafe names is not a million reports held in memory.
const MaxSkips = 1000

func (r *reader) skip(where, why string, a ...any) {
	if r.skipped++; r.skipped > MaxSkips {
		return
	}
	r.opts.Skipped(Skip{Where: where, Why: fmt.Sprintf(why, a...)})
}

// bad is the error for malformed input: where it is, what is wrong, and what to do.
func (r *reader) bad(where, format string, a ...any) error {
	return errs.E("imports."+r.src.Kind, errs.Invalid, "%s: %s. This does not look like a %s export; check the file, or pick the kind that made it.",
		where, fmt.Sprintf(format, a...), r.src.Kind)
}

// counting reports progress as bytes are read.
type counting struct {
	r io.Reader
	n *int64
	f func()
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	c.f()
	return n, err
}

func (r *reader) progress(rd io.Reader) io.Reader {
	last := int64(-1)
	return &counting{r: rd, n: &r.done, f: func() {
		if r.done-last >= 1<<20 || r.done == r.all {
			last = r.done
			r.opts.Progress(r.done, r.all)
		}
	}}
}

// oneLine folds a text to a single line: runs of white space and control characters become one space.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for _, c := range s {
		if unicode.IsSpace(c) || unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Slug makes a file name from a title: lowercase letters and digits of any script, joined by dashes,
// at most 60 characters; "" when nothing is left.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
			if b.Len() >= 60 {
				break
			}
			continue
		}
		dash = true
	}
	return strings.TrimSuffix(b.String(), "-")
}

// shortID is 8 hex characters of a hash of id: enough to keep two documents of the same day and title
// apart, stable across imports.
func shortID(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:4])
}

// Readable turns a source's identifier ("John_Smith", "works_at", "isSonOf") into words.
func Readable(s string) string {
	var b strings.Builder
	prev := rune(0)
	for _, c := range s {
		switch {
		case c == '_' || c == '-':
			b.WriteByte(' ')
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			b.WriteByte(' ')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
		prev = c
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
