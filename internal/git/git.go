// Package git owns talking to a git repository: it drives the git binary with a fixed environment (no
// user or system config, a fixed identity, no hooks, no prompts, no program the repository's own
// configuration names), reads and writes objects and trailers, and pushes to and clones from the box's
// backup remotes. It knows nothing of boxes, cards or memory.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Identity is the author and committer of every commit the box makes; the actor goes in the trailers.
const (
	IdentityName  = "Box"
	IdentityEmail = "box@localhost"
)

// Repo is one repository's working tree. It holds no open resources.
type Repo struct {
	Dir string // the working tree root
	Bin string // the git binary; "git" on PATH unless set
	// CallerSyncs means the caller fsyncs the blobs WriteBlob writes (the box's write transaction
	// does, all in parallel) and that Add need not fsync; Commit is always durable.
	CallerSyncs bool
}

// Open returns a handle on the repository whose working tree is dir. It does not check that one exists.
func Open(dir string) *Repo {
	return &Repo{Dir: dir, Bin: "git"}
}

// Error is a failed git command: the arguments and the first lines of git's stderr.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// fixedConfig is passed as -c to every command: the box's own commits never run hooks or sign, never
// start a background gc in the middle of a write burst, and make commits durable (objects and refs fsynced).
var fixedConfig = []string{
	"core.hooksPath=/dev/null",
	"commit.gpgsign=false",
	"gc.auto=0",
	"maintenance.auto=false",
	"core.fsync=committed",
	"core.fsyncMethod=batch",
	"core.autocrlf=false",
	"core.quotepath=off",
	"init.defaultBranch=main",
}

// env is the whole environment of a git child: nothing inherited but PATH and TMPDIR, so a caller's
// GIT_DIR, GIT_INDEX_FILE (set inside hooks) or user config can never redirect the box's commits. The
// rest silences what the repository's configuration could otherwise run (docs/SECURITY.md, "Git"): the
// editors, the askpass (a push hands its own in extra), ssh, the system's attributes, lazy fetches,
// and every protocol that runs a program.
func env(extra ...string) []string {
	e := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=" + IdentityName, "GIT_AUTHOR_EMAIL=" + IdentityEmail,
		"GIT_COMMITTER_NAME=" + IdentityName, "GIT_COMMITTER_EMAIL=" + IdentityEmail,
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true",
		"GIT_ASKPASS=", "GIT_SSH_COMMAND=" + sshCommand, "GIT_ALLOW_PROTOCOL=" + allowedProtocols,
		"GIT_NO_LAZY_FETCH=1", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "LANGUAGE=C",
	}
	for _, k := range []string{"PATH", "TMPDIR", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			e = append(e, k+"="+v)
		}
	}
	return append(e, extra...) // a later entry wins: a push's askpass replaces the empty one
}

// Run runs git with args in the working tree and returns stdout. stdin may be nil. It refuses to run
// while the repository's configuration names a program no override silences (checkConfig).
func (r *Repo) Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	if err := r.checkConfig(ctx, false); err != nil {
		return nil, err
	}
	return r.run(ctx, call{stdin: stdin}, args...)
}

// call is what one git command gets beyond its arguments.
type call struct {
	stdin  []byte
	env    []string // added to env(): a push's askpass, token and ssh agent
	secret string   // never shown: scrubbed from the error text
	// hide, when set, names a remote's address as the box shows it (ShownURL: it may hold a password or a
	// token) in the error text and the command line an Error keeps.
	hide   *strings.Replacer
	noRepo bool // the command reads no repository (ls-remote before a clone): no -C, no GIT_DIR
}

func (r *Repo) run(ctx context.Context, c call, args ...string) ([]byte, error) {
	full := make([]string, 0, len(args)+2*(len(fixedConfig)+len(neutral))+2)
	extra := c.env
	if !c.noRepo {
		dir, err := filepath.Abs(r.Dir)
		if err != nil {
			return nil, err
		}
		// The repository and its work tree are pinned: core.worktree cannot move the box's commands
		// to another folder.
		full = append(full, "-C", dir)
		extra = append([]string{"GIT_DIR=" + filepath.Join(dir, ".git"), "GIT_WORK_TREE=" + dir}, extra...)
	}
	for _, cfg := range [][]string{fixedConfig, neutral} {
		for _, kv := range cfg {
			full = append(full, "-c", kv)
		}
	}
	full = append(full, args...)
	var stdout, stderr bytes.Buffer
	var err error
	// A writer killed mid-command frees the box lock a moment before its git child is killed with it
	// (procAttr), so the next writer can meet that git's lock file: git then changes nothing, and the
	// command is tried again for a short while (docs/ARCHITECTURE.md, "A killed writer").
	for deadline := time.Now().Add(lockRetry); ; {
		cmd := exec.CommandContext(ctx, r.bin(), full...)
		cmd.Env = env(extra...)
		cmd.SysProcAttr = procAttr()
		// Once ctx ends, git is killed with its helpers (git-remote-http, ssh). A helper may still hold
		// git's output open (one git left after it exited, or one outside the group): the command ends
		// anyway this long after, instead of when the helper gives up.
		cmd.Cancel = func() error { return killGroup(cmd) }
		cmd.WaitDelay = waitDelay
		if c.stdin != nil {
			cmd.Stdin = bytes.NewReader(c.stdin)
		}
		stdout.Reset()
		stderr.Reset()
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
			err = nil // git succeeded; only a helper it left held its output past waitDelay
		}
		if err == nil || !lockBusy(stderr.String()) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		msg := firstLines(stderr.String(), 4)
		if c.secret != "" {
			msg = strings.ReplaceAll(msg, c.secret, "[token]")
		}
		if c.hide != nil {
			msg = c.hide.Replace(msg)
			named := make([]string, len(args))
			for i, a := range args {
				named[i] = c.hide.Replace(a)
			}
			args = named
		}
		return stdout.Bytes(), &Error{Args: args, Stderr: msg, Err: err}
	}
	return stdout.Bytes(), nil
}

// waitDelay is how long a killed git's output is waited for (exec.Cmd.WaitDelay).
const waitDelay = 2 * time.Second

// lockRetry bounds how long a command waits out another git's lock file.
const lockRetry = 2 * time.Second

// lockBusy reports git's refusal to take a lock file another git holds ("Unable to create
// '….lock': File exists."), after which it has changed nothing.
func lockBusy(stderr string) bool {
	return strings.Contains(stderr, "Unable to create '") && strings.Contains(stderr, ".lock': File exists")
}

func (r *Repo) bin() string {
	if r.Bin == "" {
		return "git"
	}
	return r.Bin
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// Init makes the working tree a repository (harmless on an existing one) with main as its first branch.
func (r *Repo) Init(ctx context.Context) error {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	_, err := r.Run(ctx, nil, "init", "-q")
	return err
}

// GitDir is the repository's .git directory (a linked .git file is not followed).
func (r *Repo) GitDir() string { return filepath.Join(r.Dir, ".git") }

// Add stages paths (relative to the working tree, "/" separated, taken literally) as they are on
// disk: a present file is added, a missing one removed from the index, a path git never knew ignored.
func (r *Repo) Add(ctx context.Context, paths ...string) error {
	if len(paths) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(strings.TrimPrefix(p, "/"))
		in.WriteByte(0)
	}
	args := []string{"update-index", "--add", "--remove", "-z", "--stdin"}
	if r.CallerSyncs {
		args = append([]string{"-c", "core.fsync=none"}, args...)
	}
	_, err := r.Run(ctx, in.Bytes(), args...)
	return err
}

// Trailer is one "Key: value" line at the end of a commit message.
type Trailer struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Message builds a commit message: the subject, an optional body, then the trailers. Newlines in a
// subject or trailer value are folded to spaces so nothing can forge a trailer.
func Message(subject, body string, trailers []Trailer) string {
	var b strings.Builder
	b.WriteString(oneLine(subject))
	b.WriteString("\n")
	if body = strings.TrimSpace(body); body != "" {
		b.WriteString("\n" + body + "\n")
	}
	if len(trailers) > 0 {
		b.WriteString("\n")
		for _, t := range trailers {
			fmt.Fprintf(&b, "%s: %s\n", oneLine(t.Key), oneLine(t.Value))
		}
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == 0 {
			return ' '
		}
		return r
	}, s)
	if s = strings.TrimSpace(s); s == "" {
		return "-"
	}
	return s
}

// Commit records the index as a new commit with msg (subject first) and trailers and returns its hash.
func (r *Repo) Commit(ctx context.Context, msg string, trailers []Trailer) (string, error) {
	subject, body, _ := strings.Cut(msg, "\n")
	full := Message(subject, body, trailers)
	if _, err := r.Run(ctx, []byte(full), "commit", "-q", "--no-verify", "--allow-empty", "--cleanup=verbatim", "-F", "-"); err != nil {
		return "", err
	}
	return r.Head(ctx)
}

// Head returns the hash HEAD points to, reading the ref files directly when it can (no process).
func (r *Repo) Head(ctx context.Context) (string, error) {
	if h, ok := r.readHead(); ok {
		return h, nil
	}
	out, err := r.Run(ctx, nil, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func (r *Repo) readHead() (string, bool) {
	head, err := os.ReadFile(filepath.Join(r.GitDir(), "HEAD"))
	if err != nil {
		return "", false
	}
	s := strings.TrimSpace(string(head))
	ref, ok := strings.CutPrefix(s, "ref: ")
	if !ok {
		return s, isHex(s)
	}
	b, err := os.ReadFile(filepath.Join(r.GitDir(), filepath.FromSlash(ref)))
	if err != nil {
		return "", false
	}
	h := strings.TrimSpace(string(b))
	return h, isHex(h)
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// HasCommits reports whether HEAD points to a commit.
func (r *Repo) HasCommits(ctx context.Context) bool {
	_, err := r.Head(ctx)
	return err == nil
}

// Change is one staged path: Status is A, M, D or R (a rename, with OldPath), or another letter git uses;
// Mode is the staged file's mode as git writes it (100644, 100755, 120000 for a symlink, 000000 deleted).
type Change struct {
	Status  string `json:"status"`
	Path    string `json:"path"`
	OldPath string `json:"oldPath,omitempty"`
	Mode    string `json:"mode,omitempty"`
}

// Staged lists the staged changes against HEAD, renames detected.
func (r *Repo) Staged(ctx context.Context) ([]Change, error) {
	args := []string{"diff", "--cached", "--raw", "-z", "-M"}
	if !r.HasCommits(ctx) {
		args = append(args, emptyTree)
	}
	out, err := r.Run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	return parseRaw(out), nil
}

const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// parseRaw reads `git diff --raw -z`: ":oldmode newmode oldsha newsha status" then the path (two paths for a
// rename or a copy), each ended by NUL.
func parseRaw(out []byte) []Change {
	f := strings.Split(string(out), "\x00")
	var cs []Change
	for i := 0; i+1 < len(f); {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) < 5 || meta[4] == "" {
			break
		}
		c := Change{Status: meta[4][:1], Mode: meta[1]}
		if (c.Status == "R" || c.Status == "C") && i+2 < len(f) {
			c.OldPath, c.Path = f[i+1], f[i+2]
			i += 3
		} else {
			c.Path = f[i+1]
			i += 2
		}
		cs = append(cs, c)
	}
	return cs
}

// StatusEntry is one line of `git status --porcelain`: XY are the index and worktree letters.
type StatusEntry struct {
	XY      string `json:"xy"`
	Path    string `json:"path"`
	OldPath string `json:"oldPath,omitempty"`
}

// Status lists uncommitted changes (untracked files included, ignored ones not).
func (r *Repo) Status(ctx context.Context) ([]StatusEntry, error) {
	// A gitlink is never entered: git would run status inside the nested repository, with its own
	// configuration (a filter, an fsmonitor) that the box never checked.
	out, err := r.Run(ctx, nil, "status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=all")
	if err != nil {
		return nil, err
	}
	f := strings.Split(string(out), "\x00")
	var es []StatusEntry
	for i := 0; i < len(f); i++ {
		if len(f[i]) < 4 {
			continue
		}
		e := StatusEntry{XY: f[i][:2], Path: f[i][3:]}
		if (e.XY[0] == 'R' || e.XY[0] == 'C') && i+1 < len(f) {
			e.OldPath = f[i+1]
			i++
		}
		es = append(es, e)
	}
	return es, nil
}

// Revert makes a commit that reverses commit, with hooks off.
func (r *Repo) Revert(ctx context.Context, commit string) error {
	_, err := r.Run(ctx, nil, "revert", "--no-edit", commit)
	return err
}

// Trailers returns the trailers of commit's message, in order.
func (r *Repo) Trailers(ctx context.Context, commit string) ([]Trailer, error) {
	out, err := r.Run(ctx, nil, "log", "-1", "--format=%(trailers:only,unfold)", commit, "--")
	if err != nil {
		return nil, err
	}
	return parseTrailers(string(out)), nil
}

func parseTrailers(s string) []Trailer {
	var ts []Trailer
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		ts = append(ts, Trailer{Key: k, Value: strings.TrimSpace(v)})
	}
	return ts
}

// CommitInfo is one commit as Log reads it.
type CommitInfo struct {
	Hash     string    `json:"hash"`
	Subject  string    `json:"subject"`
	Trailers []Trailer `json:"trailers,omitempty"`
}

// LogOptions narrow Log: at most Max commits (0 = all), only those with the trailer Key: Value
// (Value empty = any value), only those touching Path.
type LogOptions struct {
	Max   int
	Key   string
	Value string
	Path  string
}

// Log lists commits newest first.
func (r *Repo) Log(ctx context.Context, o LogOptions) ([]CommitInfo, error) {
	if !r.HasCommits(ctx) {
		return nil, nil
	}
	args := []string{"log", "--format=%H%x1f%s%x1f%(trailers:only,unfold)%x1e"}
	if o.Key != "" {
		// A cheap pre-filter in git; the exact match is checked below.
		args = append(args, "--fixed-strings", "--grep="+o.Key+": "+o.Value)
	}
	if o.Max > 0 && o.Key == "" {
		args = append(args, fmt.Sprintf("-n%d", o.Max))
	}
	args = append(args, "HEAD", "--")
	if o.Path != "" {
		args = append(args, o.Path)
	}
	out, err := r.Run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	var cs []CommitInfo
	for _, rec := range strings.Split(string(out), "\x1e") {
		rec = strings.TrimLeft(rec, "\n")
		parts := strings.SplitN(rec, "\x1f", 3)
		if len(parts) < 3 {
			continue
		}
		c := CommitInfo{Hash: parts[0], Subject: parts[1], Trailers: parseTrailers(parts[2])}
		if o.Key != "" && !hasTrailer(c.Trailers, o.Key, o.Value) {
			continue
		}
		cs = append(cs, c)
		if o.Max > 0 && len(cs) >= o.Max {
			break
		}
	}
	return cs, nil
}

func hasTrailer(ts []Trailer, key, value string) bool {
	for _, t := range ts {
		if strings.EqualFold(t.Key, key) && (value == "" || t.Value == value) {
			return true
		}
	}
	return false
}

// Show returns the bytes of path (relative, "/" separated) at rev; a missing path is an error that
// IsNotExist recognises.
func (r *Repo) Show(ctx context.Context, rev, path string) ([]byte, error) {
	out, err := r.Run(ctx, nil, "cat-file", "blob", rev+":"+strings.TrimPrefix(path, "/"))
	if err != nil {
		return nil, notExist(err)
	}
	return out, nil
}

// Blob returns the bytes of the blob with id.
func (r *Repo) Blob(ctx context.Context, id string) ([]byte, error) {
	out, err := r.Run(ctx, nil, "cat-file", "blob", id)
	if err != nil {
		return nil, notExist(err)
	}
	return out, nil
}

// ErrNotExist is returned (wrapped) when a path or object is not in the repository.
var ErrNotExist = errors.New("not in the repository")

func notExist(err error) error {
	var ge *Error
	if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "does not exist") || strings.Contains(ge.Stderr, "Not a valid object") ||
		strings.Contains(ge.Stderr, "exists on disk, but not in") || strings.Contains(ge.Stderr, "bad file") ||
		strings.Contains(ge.Stderr, "invalid object name") || strings.Contains(ge.Stderr, "Not a valid object name")) {
		return fmt.Errorf("%w: %v", ErrNotExist, err)
	}
	return err
}

// HashObject returns the blob id of data; with write it also stores the blob.
func (r *Repo) HashObject(ctx context.Context, data []byte, write bool) (string, error) {
	args := []string{"hash-object", "--stdin"}
	if write {
		args = append(args, "-w")
	}
	out, err := r.Run(ctx, data, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// MergeFile is a 3-way merge of files: the changes from base to other applied onto current. It
// returns the merged bytes and whether there were conflicts (then the bytes hold conflict markers).
func (r *Repo) MergeFile(ctx context.Context, current, base, other []byte) ([]byte, bool, error) {
	dir, err := os.MkdirTemp("", "box-merge-")
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = os.RemoveAll(dir) }() // scratch under the system temp folder
	names := []string{"current", "base", "other"}
	for i, data := range [][]byte{current, base, other} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), data, 0o600); err != nil {
			return nil, false, err
		}
	}
	cmd := exec.CommandContext(ctx, r.bin(), "merge-file", "-p", "-L", "current", "-L", "base", "-L", "undo",
		filepath.Join(dir, "current"), filepath.Join(dir, "base"), filepath.Join(dir, "other"))
	cmd.Env = env("GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)) // no repository around it is read
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), false, nil
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 127:
		return stdout.Bytes(), true, nil // exit code = number of conflicts
	}
	return nil, false, &Error{Args: []string{"merge-file"}, Stderr: firstLines(stderr.String(), 4), Err: err}
}
