package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/secret"
)

// session is one hook call: the payload, the owner's box, the project the agent works in, and the
// session's folder .box/sessions/<session_id>/ where the hooks leave each other their record.
type session struct {
	in       Input
	env      Env
	shellCwd string // the session's folder as the agent gave it, links in it kept: the shell's $PWD
	root     string // the owner's box
	real     string // root with its links followed (realRoot)
	project  string // the agent's project: the git work tree holding cwd (the box itself when inside it)
	inBox    bool   // the agent works inside the box
	id       string
	dir      string
	now      func() time.Time
	settings Settings
}

// Settings are the hooks' knobs, read from <box>/.box/hooks.json (runtime, never committed):
//
//	{"scope": "enforce", "readMaxTokens": 12000, "sieveMinTokens": 2500}
//
// scope "observe" (the default) records writes outside the brief's scope in the session folder and
// emits nothing; "enforce" denies them. Zero numbers mean the defaults.
type Settings struct {
	Scope          string `json:"scope,omitempty"`
	ReadMaxTokens  int    `json:"readMaxTokens,omitempty"`
	SieveMinTokens int    `json:"sieveMinTokens,omitempty"`
}

// SettingsFile is where Settings live, under the box root.
const SettingsFile = ".box/hooks.json"

func loadSettings(root string) Settings {
	s := Settings{Scope: "observe", ReadMaxTokens: 12000, SieveMinTokens: 2500}
	var f Settings
	if data, err := os.ReadFile(filepath.Join(root, SettingsFile)); err == nil && json.Unmarshal(data, &f) == nil {
		if f.Scope == "enforce" {
			s.Scope = f.Scope
		}
		if f.ReadMaxTokens > 0 {
			s.ReadMaxTokens = f.ReadMaxTokens
		}
		if f.SieveMinTokens > 0 {
			s.SieveMinTokens = f.SieveMinTokens
		}
	}
	return s
}

func openSession(in Input, env Env) (*session, error) {
	root, err := findBox(in, env)
	if err != nil {
		return nil, err
	}
	// The session's folder is read with its links followed, as the kernel reads a relative path from it:
	// a cwd reached through a link to the box is the box (docs/HOOKS.md, "The Bash guard").
	given := in.Cwd
	if real, err := filepath.EvalSymlinks(in.Cwd); err == nil && in.Cwd != "" {
		in.Cwd = real
	}
	s := &session{in: in, env: env, shellCwd: given, root: root, now: env.Now, settings: loadSettings(root)}
	s.id = safeID(in.SessionID)
	s.dir = filepath.Join(root, ".box", "sessions", s.id)
	s.project = projectRoot(in.Cwd)
	if s.project == "" || within(root, in.Cwd) {
		s.project, s.inBox = root, true
	}
	return s, nil
}

// safeID makes a session id safe as a folder name.
func safeID(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	out := strings.Trim(b.String(), ".")
	if out == "" || len(out) > 80 || out != id {
		return "s-" + hash(id)[:16]
	}
	return out
}

// projectRoot is the nearest folder at or above dir holding .git, else dir; "" when dir is empty.
func projectRoot(dir string) string {
	if dir == "" {
		return ""
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return filepath.Clean(dir)
		}
	}
}

// within reports whether path is root or lies below it: by its text, or with the links of both followed
// (layout.FromHost), so a box named through a link, or a path through one, is still the box.
func within(root, path string) bool {
	if root == "" || path == "" {
		return false
	}
	if lexWithin(root, path) {
		return true
	}
	_, err := layout.FromHost(root, path)
	return err == nil
}

// lexWithin is within by the paths' text alone.
func lexWithin(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Record is what the hooks know about the session, written as it goes and restated after a compaction:
// the task, the brief's scope, the files edited, the last commands and (when frozen) the open gates.
type Record struct {
	Task     string    `json:"task,omitempty"`
	Brief    string    `json:"brief,omitempty"` // key of the standing brief under briefs/
	Scope    []string  `json:"scope,omitempty"` // host folders the brief located
	Edited   []string  `json:"edited,omitempty"`
	Commands []string  `json:"commands,omitempty"`
	Gates    []string  `json:"gates,omitempty"`
	Updated  time.Time `json:"updated,omitzero"`
}

// maxCommands is how many last commands the record keeps.
const maxCommands = 10

// recorded is text the record keeps (a command, a task's prompt) folded to one line of at most n runes,
// through the secret rules (docs/SECRETS.md): the record is restated to the model after a compaction, so
// a key typed into a command must not come back. A word that alone reads as a secret is replaced; text
// that still reads as one (a password named in words) is withheld whole. Only the first 4n runes are
// read: no more is kept.
func recorded(text string, n int) string {
	text = oneLine(text, 4*n)
	if _, found := secret.Secret(text); found {
		words := strings.Fields(text)
		for i, w := range words {
			if _, found := secret.Secret(w); found {
				words[i] = "[secret withheld]"
			}
		}
		text = strings.Join(words, " ")
		if _, found := secret.Secret(text); found {
			return "[withheld: it reads as holding a secret]"
		}
	}
	return oneLine(text, n)
}

// Marker counts compactions and which one was answered, by which hook.
type Marker struct {
	Compactions int    `json:"compactions"`
	Answered    int    `json:"answered"`
	By          string `json:"by,omitempty"`
}

// The files of a session folder.
const (
	recordFile = "record.json"
	frozenFile = "frozen.json"
	markerFile = "compaction.json"
	seenFile   = "seen.json"
	scopeLog   = "scope.jsonl"
)

// locked runs fn holding the session folder's lock: hooks of one session run concurrently (parallel tool
// calls), and the record is read-modify-write.
func (s *session) locked(fn func() error) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // hooks fail open: a close is not worth failing a session for
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }() // the close below releases it anyway
	return fn()
}

// load reads a JSON file of the session folder into v; a missing file leaves v as it is.
func (s *session) load(name string, v any) error {
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func (s *session) save(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	return writeFile(filepath.Join(s.dir, name), append(data, '\n'))
}

// writeFile replaces a file atomically (temp file, rename) but without fsync: everything the hooks keep
// under .box/ is a cache a crash may lose, and a hook must not wait on the disk.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// update changes the record under the lock.
func (s *session) update(fn func(r *Record)) error {
	return s.locked(func() error {
		var r Record
		if err := s.load(recordFile, &r); err != nil {
			r = Record{} // a mangled record is replaced, not fatal
		}
		before, _ := json.Marshal(r)
		fn(&r)
		if after, _ := json.Marshal(r); bytes.Equal(before, after) {
			return nil
		}
		r.Updated = s.now().UTC()
		return s.save(recordFile, r)
	})
}

func (s *session) record() Record {
	var r Record
	_ = s.load(recordFile, &r)
	return r
}

// once reports whether key is new for this session and remembers it: a denial is given once, and the
// same call repeated goes through, so a guard can never wedge a session.
func (s *session) once(key string) bool {
	fresh := false
	_ = s.locked(func() error {
		seen := map[string]bool{}
		_ = s.load(seenFile, &seen)
		if seen[key] {
			return nil
		}
		fresh = true
		seen[key] = true
		return s.save(seenFile, seen)
	})
	return fresh
}

// appendLine appends one JSON line to a file of the session folder.
func (s *session) appendLine(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // hooks fail open: a close is not worth failing a session for
	_, err = f.Write(append(data, '\n'))
	return err
}

// display shows a host path as the agent knows it: a box path inside the box, else relative to the
// project, else as is.
func (s *session) display(host string) string {
	if lexWithin(s.root, host) {
		rel, _ := filepath.Rel(s.root, host)
		return "/" + filepath.ToSlash(rel)
	}
	if bp, err := layout.FromHost(s.root, host); err == nil {
		return bp
	}
	if lexWithin(s.project, host) {
		rel, _ := filepath.Rel(s.project, host)
		return filepath.ToSlash(rel)
	}
	if rel, err := layout.FromHost(s.project, host); err == nil && rel != "/" {
		return strings.TrimPrefix(rel, "/")
	}
	return host
}
