package git

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/secret"
)

// Off-machine backup (docs/BACKUP.md): the box pushes its branch, under its own name, to git remotes it
// manages in its repository's configuration, remembers what each remote last received, force-pushes a
// rewritten history after an erase, and clones a box back from a remote. Retrying is the caller's.

// Remote is one backup remote: its name and URL in the repository's configuration, and what the box
// last knows of it.
type Remote struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Pushed is the commit the remote's branch held after the box's last push to it ("" = never pushed).
	Pushed string `json:"pushed,omitempty"`
	// Behind counts the commits on the box's branch that the remote has not received (all of them when
	// it never has; a rewritten history counts whole).
	Behind int `json:"behind"`
}

// Auth is how a push or a clone proves itself. The owner's ssh agent (SSH_AUTH_SOCK of this process) is
// passed to ssh remotes always; a token goes to https remotes through the box's own askpass.
type Auth struct {
	// Token is handed to git by Askpass when the remote asks for a password: never in an argument,
	// the repository's configuration, a log or an error.
	Token string
	// User is the user name given with the token when the URL names none ("box" if empty; GitHub and
	// Gitea accept any name with a token).
	User string
	// Askpass is the program git runs to ask for the token: the box binary itself (os.Executable), whose
	// main calls Askpass first.
	Askpass string
	// URL is the address the token was given for. A token goes only there: a push or clone to any
	// other address (a remote whose URL .git/config now names differently) is refused, never sent.
	URL string
	// Stall is how long a remote may send nothing before git gives up: ssh's connect timeout and
	// keep-alives, http's low-speed limit (less than a byte a second). 0 is DefaultStall.
	Stall time.Duration
}

// DefaultStall is how long a remote that stopped answering is waited for: a server that accepts and
// never answers would otherwise hold a push, and the job runner behind it, forever.
const DefaultStall = time.Minute

// stallEnv bounds how long git waits on a remote that sends nothing: curl's low-speed limit for http(s),
// and for ssh a connect timeout (it covers the handshake) and keep-alives that end a dead connection.
// The ssh is the box's own (BatchMode, no prompt) with these options added.
func stallEnv(d time.Duration) []string {
	if d <= 0 {
		d = DefaultStall
	}
	secs := max(int(d.Round(time.Second)/time.Second), 1)
	alive := max(secs/4, 1)
	return []string{"GIT_HTTP_LOW_SPEED_LIMIT=1", "GIT_HTTP_LOW_SPEED_TIME=" + strconv.Itoa(secs),
		fmt.Sprintf("GIT_SSH_COMMAND=%s -o ConnectTimeout=%d -o ServerAliveInterval=%d -o ServerAliveCountMax=%d", sshCommand, secs, alive, max(secs/alive, 1))}
}

// trackingRef is where the box keeps what a remote last received of branch.
func trackingRef(remote, branch string) string { return "refs/remotes/" + remote + "/" + branch }

// backupKey marks a remote section as the box's own: a remote the owner made for something else is
// never listed, pushed to or removed by the box.
const backupKey = "boxbackup"

var nameRe = lazyregexp.New(`^[a-z0-9][a-z0-9-]{0,39}$`)

// CheckName refuses a remote name the box would not manage: lower-case letters, digits and dashes.
func CheckName(name string) error {
	if !nameRe.MatchString(name) {
		return errs.E("git.remote", errs.Invalid, "%q is not a backup name; use lower-case letters, digits and dashes (like usb or github), at most 40.", name)
	}
	return nil
}

var schemeRe = lazyregexp.New(`^([A-Za-z][A-Za-z0-9+.-]*)://`)
var helperRe = lazyregexp.New(`^([A-Za-z][A-Za-z0-9+.-]*)::`)

// CheckURL refuses a remote URL git would not be given: a form that runs a program (ext::, fd:: or any
// remote helper), a transport the box does not use, a relative path, or a password or a token inside the
// URL (it would sit in .git/config and be shown wherever the backup is named; the token goes to the vault
// instead). A refusal names the address without what may be a secret (safeURL).
func CheckURL(u string) error {
	const op = "git.url"
	switch {
	case u == "":
		return errs.E(op, errs.Invalid, "Give the remote's URL: a path to a bare repository, ssh://… or user@host:path, or https://….")
	case strings.ContainsFunc(u, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return errs.E(op, errs.Invalid, "The remote's URL holds a control character; give it on one line.")
	case credentials(u):
		return errs.E(op, errs.Invalid, "The URL holds a password or a token, which would be stored in .git/config; give the URL without it and the token separately (it is kept sealed in the vault). For a backup added before: box backup remove NAME, then box backup add NAME URL --token-from-stdin.")
	case strings.HasPrefix(u, "-"):
		return errs.E(op, errs.Invalid, "%s starts with a dash, which git would read as an option; give a path or a URL.", shownURL(u))
	}
	if m := helperRe.FindStringSubmatch(u); m != nil {
		return errs.E(op, errs.Invalid, "%s uses the %s:: form, which makes git run a program; the box pushes only to a path, ssh or https.", shownURL(u), m[1])
	}
	if m := schemeRe.FindStringSubmatch(u); m != nil {
		return checkSchemeURL(u, strings.ToLower(m[1]))
	}
	if filepath.IsAbs(u) {
		return nil
	}
	// scp-like user@host:path; a colon after the first slash is a local path, which must be absolute.
	if colon := scpColon(u); colon > 0 {
		host := u[:colon]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
		if host == "" || strings.HasPrefix(host, "-") || colon == len(u)-1 {
			return errs.E(op, errs.Invalid, "%s is not a usable ssh address; write user@host:path/to/repo.git.", shownURL(u))
		}
		return nil
	}
	return errs.E(op, errs.Invalid, "%s is a relative path; give the absolute path of the bare repository.", shownURL(u))
}

func checkSchemeURL(u, scheme string) error {
	const op = "git.url"
	switch scheme {
	case "file", "ssh", "git+ssh", "ssh+git", "https", "http":
	case "git":
		return errs.E(op, errs.Invalid, "%s uses git://, which has no authentication and cannot be pushed to safely; use ssh or https.", shownURL(u))
	default:
		return errs.E(op, errs.Invalid, "%s uses %s://, which the box does not push to; use a path, ssh or https.", shownURL(u), scheme)
	}
	p, err := url.Parse(u)
	if err != nil {
		// Not url.Parse's own words: they quote the part it stumbled on, which may be a password.
		return errs.E(op, errs.Invalid, "%s is not a URL the box can read; check its host, port and escapes.", shownURL(u))
	}
	if scheme == "file" {
		if p.Host != "" && p.Host != "localhost" || !strings.HasPrefix(p.Path, "/") {
			return errs.E(op, errs.Invalid, "%s is not a local file URL; write file:///absolute/path.git.", shownURL(u))
		}
		return nil
	}
	if p.Hostname() == "" || strings.HasPrefix(p.Hostname(), "-") {
		return errs.E(op, errs.Invalid, "%s names no usable host.", shownURL(u))
	}
	return nil
}

// isHTTP reports a URL git reaches over http(s), where a token is asked for.
func isHTTP(u string) (scheme string, ok bool) {
	if m := schemeRe.FindStringSubmatch(u); m != nil {
		s := strings.ToLower(m[1])
		return s, s == "http" || s == "https"
	}
	return "", false
}

// transport is the environment and secret of a push, fetch or clone to u: the limits on a remote that
// stops answering (stallEnv), the owner's ssh agent, and for http(s) with a token, the box's askpass and
// the token for that origin only.
func transport(u string, a Auth) (call, error) {
	c := call{env: stallEnv(a.Stall)}
	c.hide = hider(u)
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		c.env = append(c.env, "SSH_AUTH_SOCK="+sock)
	}
	scheme, web := isHTTP(u)
	if a.Token == "" || !web {
		return c, nil
	}
	p, err := url.Parse(u)
	if err != nil {
		return c, errs.E("git.auth", errs.Invalid, "%s is not a URL the box can read.", shownURL(u))
	}
	if scheme == "http" && !loopback(p.Hostname()) {
		return c, errs.E("git.auth", errs.Refused, "A token is never sent over plain http to another machine; use %s.", ShownURL("https://"+p.Host+p.Path))
	}
	switch {
	case a.URL == "":
		return c, errs.E("git.auth", errs.Conflict, "The token for %s was kept without the address it was given for, so the box does not send it; remove the backup and add it again with its token (box backup remove, then box backup add).", ShownURL(u))
	case a.URL != u:
		now, was := ShownURL(u), ShownURL(a.URL)
		if now == was {
			now += " (it differs in a part the box does not show)"
		}
		return c, errs.E("git.auth", errs.Conflict, "The backup's address is now %s, but its token was added for %s; the box sends a token only to the address it was added for. If you moved the backup, remove it and add it again with its token (box backup remove, then box backup add).", now, was)
	}
	if !filepath.IsAbs(a.Askpass) {
		return c, errs.E("git.auth", errs.Other, "The box's askpass program must be given as an absolute path (the box binary).")
	}
	user := a.User
	if user == "" {
		user = "box"
	}
	c.env = append(c.env, "GIT_ASKPASS="+a.Askpass, askpassMarker+"=1", askpassToken+"="+a.Token,
		askpassUser+"="+user, askpassOrigin+"="+origin(p))
	c.secret = a.Token
	return c, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// origin is a URL's scheme, host and port, the part a token is bound to.
func origin(p *url.URL) string {
	port := p.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(p.Scheme)]
	}
	return strings.ToLower(p.Scheme) + "://" + strings.ToLower(p.Hostname()) + ":" + port
}

// Remotes lists the backup remotes, each with what it last received and how far behind it is.
func (r *Repo) Remotes(ctx context.Context) ([]Remote, error) {
	out, err := r.Run(ctx, nil, "config", "-z", "--get-regexp", `^remote\.`)
	if err != nil && !isExit(err, 1) { // exit 1: no remote at all
		return nil, err
	}
	urls, managed := map[string]string{}, map[string]bool{}
	var order []string
	for _, rec := range strings.Split(string(out), "\x00") {
		key, val, _ := strings.Cut(rec, "\n")
		_, name, sub := splitKey(key)
		switch name {
		case "url":
			if _, seen := urls[sub]; !seen {
				order = append(order, sub)
			}
			urls[sub] = val
		case backupKey:
			managed[sub] = val == "true"
		}
	}
	branch, err := r.Branch(ctx)
	if err != nil {
		return nil, err
	}
	var rs []Remote
	for _, name := range order {
		if !managed[name] {
			continue
		}
		rm := Remote{Name: name, URL: urls[name]}
		if rm.Pushed, err = r.ref(ctx, trackingRef(name, branch)); err != nil {
			return nil, err
		}
		if rm.Behind, err = r.behind(ctx, rm.Pushed, branch); err != nil {
			return nil, err
		}
		rs = append(rs, rm)
	}
	return rs, nil
}

// remote returns the backup remote named name, refusing a name the box does not manage.
func (r *Repo) remote(ctx context.Context, name string) (Remote, error) {
	rs, err := r.Remotes(ctx)
	if err != nil {
		return Remote{}, err
	}
	for _, rm := range rs {
		if rm.Name == name {
			return rm, CheckURL(rm.URL)
		}
	}
	return Remote{}, errs.E("git.remote", errs.NotFound, "There is no backup named %s; box backup add NAME URL makes one.", name)
}

// AddRemote makes a backup remote: the name and URL go in the repository's configuration, marked as the
// box's, with a fetch line so the owner's own git fetch NAME updates what the box knows of it.
func (r *Repo) AddRemote(ctx context.Context, name, u string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := CheckURL(u); err != nil {
		return err
	}
	if _, err := r.Run(ctx, nil, "config", "--get", "remote."+name+".url"); err == nil {
		return errs.E("git.remote", errs.Exists, "There is already a remote named %s; choose another name or remove it first.", name)
	}
	branch, err := r.Branch(ctx)
	if err != nil {
		return err
	}
	for _, kv := range [][2]string{{"url", u}, {"fetch", "+refs/heads/" + branch + ":" + trackingRef(name, branch)}, {backupKey, "true"}} {
		if _, err := r.Run(ctx, nil, "config", "remote."+name+"."+kv[0], kv[1]); err != nil {
			_, rerr := r.Run(ctx, nil, "config", "--remove-section", "remote."+name)
			return errs.Wrap("git.remote", errs.Other, errors.Join(err, rerr), "The backup could not be recorded in .git/config")
		}
	}
	return nil
}

// RemoveRemote forgets a backup remote and what the box knew of it; the remote itself is untouched.
func (r *Repo) RemoveRemote(ctx context.Context, name string) error {
	if _, err := r.remote(ctx, name); err != nil && errs.KindOf(err) == errs.NotFound {
		return err
	}
	out, err := r.Run(ctx, nil, "for-each-ref", "--format=%(refname)", "refs/remotes/"+name+"/")
	if err != nil {
		return err
	}
	for _, ref := range strings.Fields(string(out)) {
		if _, err := r.Run(ctx, nil, "update-ref", "-d", ref); err != nil {
			return err
		}
	}
	_, err = r.Run(ctx, nil, "config", "--remove-section", "remote."+name)
	return err
}

// PushResult is what one push did.
type PushResult struct {
	Remote string `json:"remote"`
	Branch string `json:"branch"`
	Commit string `json:"commit"`
	// Unchanged is true when the remote already had the commit.
	Unchanged bool `json:"unchanged"`
}

// Push sends the box's branch to the backup named name, under the same branch name. Without force, a
// remote whose branch moved elsewhere refuses (Conflict) and nothing changes; with force (after an
// erase rewrote history) the remote's branch is replaced. A failed push is an error whose kind says
// what to do: Conflict (the owner decides), Unauthorized (the credentials), anything else (try again).
func (r *Repo) Push(ctx context.Context, name string, force bool, a Auth) (PushResult, error) {
	const op = "git.push"
	rm, err := r.remote(ctx, name)
	if err != nil {
		return PushResult{}, err
	}
	if err := r.checkTransport(ctx, rm.URL); err != nil {
		return PushResult{}, err
	}
	branch, err := r.Branch(ctx)
	if err != nil {
		return PushResult{}, err
	}
	head, err := r.ref(ctx, "refs/heads/"+branch)
	if err != nil || head == "" {
		return PushResult{}, errs.E(op, errs.Invalid, "The box has no commit on %s yet; there is nothing to back up.", branch)
	}
	res := PushResult{Remote: name, Branch: branch, Commit: head, Unchanged: rm.Pushed == head}
	c, err := transport(rm.URL, a)
	if err != nil {
		return PushResult{}, err
	}
	// The commit is pushed by id, so what the remote got is known exactly; the receive-pack program is
	// named here, so remote.<name>.receivepack in the configuration is never run.
	args := []string{"push", "--porcelain", "--no-verify", "--receive-pack=" + r.receivePack(rm.URL)}
	if force {
		args = append(args, "--force")
	}
	args = append(args, "--", rm.URL, head+":refs/heads/"+branch)
	if _, err := r.run(ctx, c, args...); err != nil {
		return PushResult{}, transportError("the push to", name, err)
	}
	if _, err := r.Run(ctx, nil, "update-ref", trackingRef(name, branch), head); err != nil {
		return PushResult{}, errs.Wrap(op, errs.Other, err, "The push went through but the box could not record it")
	}
	return res, nil
}

// receivePack is the program a push runs at the other end. A repository on this machine is run by the
// box's own user, so it runs with none of that repository's programs: no hooks, no alternate-refs
// command, and no checkout of a pushed branch (which would run its filters). A server's hooks are the
// server's own.
func (r *Repo) receivePack(u string) string {
	if !isLocal(u) {
		return "git-receive-pack"
	}
	return shellQuote(r.bin()) + " -c core.hooksPath=/dev/null -c core.alternateRefsCommand=true -c receive.denyCurrentBranch=refuse receive-pack"
}

// isLocal reports a remote URL that names a repository on this machine: a path or file://.
func isLocal(u string) bool {
	if m := schemeRe.FindStringSubmatch(u); m != nil {
		return strings.EqualFold(m[1], "file")
	}
	return filepath.IsAbs(u)
}

// transportError turns git's failure to reach a remote into a sentence and a kind the caller acts on:
// Conflict (the remote moved elsewhere; the owner decides), Unauthorized (the credentials), NotFound (no
// repository there; the owner makes one), Other (try again later), with git's own reason in the sentence.
func transportError(what, name string, err error) error {
	const op = "git.remote"
	var ge *Error
	msg := err.Error()
	if errors.As(err, &ge) {
		msg = ge.Stderr
	}
	switch low := strings.ToLower(msg); {
	case strings.Contains(low, "non-fast-forward") || strings.Contains(low, "fetch first") || strings.Contains(low, "rejected") || strings.Contains(low, "stale info"):
		return errs.Wrap(op, errs.Conflict, err, fmt.Sprintf("The backup %s has commits the box does not have (it was changed from elsewhere), so nothing was pushed; the owner decides whether to overwrite it", name))
	case strings.Contains(low, "authentication failed") || strings.Contains(low, "could not read username") || strings.Contains(low, "could not read password") ||
		strings.Contains(low, "permission denied") || strings.Contains(low, "error: 403") || strings.Contains(low, "error: 401"):
		return errs.Wrap(op, errs.Unauthorized, err, fmt.Sprintf("%s refused the box's credentials; check the token or the ssh key", name))
	case strings.Contains(low, "does not appear to be a git repository") || strings.Contains(low, "repository not found") ||
		(strings.Contains(low, "repository") && strings.Contains(low, "not found")):
		return errs.Wrap(op, errs.NotFound, err, fmt.Sprintf("%s %s failed: there is no repository there (%s); make one (git init --bare PATH, or a new empty repository on the server) or remove the backup", capitalize(what), name, gitReason(msg)))
	}
	if why := gitReason(msg); why != "" {
		return errs.Wrap(op, errs.Other, err, fmt.Sprintf("%s %s failed: %s", capitalize(what), name, why))
	}
	return errs.Wrap(op, errs.Other, err, fmt.Sprintf("%s %s failed", capitalize(what), name))
}

// gitReason is the first line of git's own words in its error output (its secrets already scrubbed by
// run), without git's "fatal: " or "error: " prefix: what the owner needs to know why a push failed.
func gitReason(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"fatal: ", "error: ", "remote: "} {
			l = strings.TrimPrefix(l, p)
		}
		if l != "" && l != "…" {
			if r := []rune(l); len(r) > 200 {
				l = string(r[:199]) + "…"
			}
			return strings.TrimSuffix(l, ".")
		}
	}
	return ""
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Branch is the branch HEAD names (main in every box init makes).
func (r *Repo) Branch(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, nil, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return "", errs.Wrap("git.branch", errs.Invalid, err, "The box's repository is not on a branch (a detached HEAD); check out main first")
	}
	return strings.TrimSpace(string(out)), nil
}

// ref is the commit a ref names, or "" when there is no such ref.
func (r *Repo) ref(ctx context.Context, name string) (string, error) {
	out, err := r.Run(ctx, nil, "rev-parse", "-q", "--verify", name+"^{commit}")
	if isExit(err, 1) {
		return "", nil
	}
	return strings.TrimSpace(string(out)), err
}

// behind counts the commits on branch that pushed does not hold (all of them when pushed is "").
func (r *Repo) behind(ctx context.Context, pushed, branch string) (int, error) {
	rng := "refs/heads/" + branch
	if head, err := r.ref(ctx, rng); err != nil || head == "" {
		return 0, err
	}
	if pushed != "" {
		rng = pushed + ".." + rng
	}
	out, err := r.Run(ctx, nil, "rev-list", "--count", rng, "--")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

func isExit(err error, code int) bool {
	var ge *Error
	if !errors.As(err, &ge) {
		return false
	}
	var ee interface{ ExitCode() int }
	return errors.As(ge.Err, &ee) && ee.ExitCode() == code
}

// CloneOptions tune Clone.
type CloneOptions struct {
	Auth Auth
	// Remote, when set, records the source as a backup remote of that name that has received everything.
	Remote string
	// Check, when set, is given every file the fetched branch holds before anything is checked out; its
	// error refuses the clone, and the folder is left as it was.
	Check func(files []TreeFile) error
}

// TreeFile is one file of a commit's tree: its path and git's mode for it ("100644", "100755", "120000"
// for a link, "160000" for a submodule).
type TreeFile struct{ Mode, Path string }

// Clone makes dir (absent or empty) a working copy of the repository at u: its main, or its only
// branch when HEAD names none, checked out as the box's main. Nothing else of the source comes along.
func Clone(ctx context.Context, u, dir string, o CloneOptions) (*Repo, error) {
	const op = "git.clone"
	if err := CheckURL(u); err != nil {
		return nil, err
	}
	if o.Remote != "" {
		if err := CheckName(o.Remote); err != nil {
			return nil, err
		}
	}
	ents, err := os.ReadDir(dir)
	existed := err == nil
	if existed && len(ents) > 0 {
		return nil, errs.E(op, errs.Exists, "%s is not empty; restore into a new folder.", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, errs.Wrap(op, errs.Other, err, "The folder to restore into cannot be used")
	}
	r := Open(dir)
	ok := false
	defer func() {
		if ok {
			return
		}
		// The folder was empty or absent: everything in it is Clone's own.
		if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				_ = os.RemoveAll(filepath.Join(dir, e.Name())) // undoing a failed clone; its error is the one returned
			}
		}
		if !existed {
			_ = os.Remove(dir)
		}
	}()
	if err := r.Init(ctx); err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The new repository could not be made")
	}
	if err := r.checkTransport(ctx, u); err != nil {
		return nil, err
	}
	c, err := transport(u, o.Auth)
	if err != nil {
		return nil, err
	}
	out, err := r.run(ctx, c, "ls-remote", "--symref", "--upload-pack=git-upload-pack", "--", u, "HEAD", "refs/heads/*")
	if err != nil {
		return nil, transportError("reading", ShownURL(u), err)
	}
	branch, err := pickBranch(string(out))
	if err != nil {
		return nil, err
	}
	if _, err := r.run(ctx, c, "fetch", "--no-tags", "--update-head-ok", "--upload-pack=git-upload-pack", "--", u,
		"refs/heads/"+branch+":refs/heads/main"); err != nil {
		return nil, transportError("fetching from", ShownURL(u), err)
	}
	if o.Check != nil {
		out, err := r.Run(ctx, nil, "ls-tree", "-r", "-z", "refs/heads/main")
		if err != nil {
			return nil, errs.Wrap(op, errs.Other, err, "The fetched files could not be listed")
		}
		var files []TreeFile
		for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			meta, p, ok := strings.Cut(rec, "\t") // "<mode> <type> <object>\t<path>"
			if !ok {
				continue
			}
			mode, _, _ := strings.Cut(meta, " ")
			files = append(files, TreeFile{Mode: mode, Path: p})
		}
		if err := o.Check(files); err != nil {
			return nil, err
		}
	}
	if _, err := r.Run(ctx, nil, "reset", "-q", "--hard", "refs/heads/main"); err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The restored files could not be checked out")
	}
	if o.Remote != "" {
		head, err := r.ref(ctx, "refs/heads/main")
		if err == nil {
			err = r.AddRemote(ctx, o.Remote, u)
		}
		if err == nil {
			_, err = r.Run(ctx, nil, "update-ref", trackingRef(o.Remote, "main"), head)
		}
		if err != nil {
			return nil, err
		}
	}
	ok = true
	return r, nil
}

// pickBranch reads `git ls-remote --symref URL HEAD refs/heads/*` and picks main, else the branch HEAD
// names, else the only branch.
func pickBranch(out string) (string, error) {
	var heads []string
	symref := ""
	for _, line := range strings.Split(out, "\n") {
		if target, ok := strings.CutPrefix(line, "ref: "); ok {
			if to, from, _ := strings.Cut(target, "\t"); from == "HEAD" {
				symref = strings.TrimPrefix(to, "refs/heads/")
			}
			continue
		}
		if _, ref, ok := strings.Cut(line, "\t"); ok {
			if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
				heads = append(heads, b)
			}
		}
	}
	has := func(b string) bool {
		for _, h := range heads {
			if h == b {
				return true
			}
		}
		return false
	}
	switch {
	case has("main"):
		return "main", nil
	case symref != "" && has(symref):
		return symref, nil
	case len(heads) == 1:
		return heads[0], nil
	case len(heads) == 0:
		return "", errs.E("git.clone", errs.NotFound, "The remote holds no branch; there is nothing to restore.")
	}
	return "", errs.E("git.clone", errs.Invalid, "The remote has no main and %d branches (%s); push the box's branch as main there first.", len(heads), strings.Join(heads, ", "))
}

// credentials reports whether u carries a secret that git would keep in .git/config: a password before
// its '@' (also one url.Parse cannot read: a '/' in it ends the host early, a '%' is a broken escape), a
// user name that reads as a token (ghp_…, glpat-…), or a token in a URL's query. A plain login such as git
// or mira is a name, not a secret.
func credentials(u string) bool {
	var user string
	if m := schemeRe.FindStringSubmatch(u); m != nil {
		p, err := url.Parse(u)
		if err != nil {
			rest := u[len(m[0]):]
			at := strings.LastIndexByte(rest, '@')
			if at < 0 {
				return false
			}
			_, found := secret.Secret(rest[:at])
			return found || strings.Contains(rest[:at], ":")
		}
		if _, found := secret.Secret(p.RawQuery); found {
			return true
		}
		if p.User == nil {
			// https://mira:1234/pw@host reads as host mira, port 1234: not told from https://host:8443/a@b.git,
			// which is accepted; ShownURL cuts such a path in the box's own sentences and status.
			return false
		}
		if _, ok := p.User.Password(); ok {
			return true
		}
		user = p.User.Username()
	} else {
		// user@host:path, as git reads it: the host ends at the first ':'. A ':' before the first '@', with
		// another after it, is user:password@host:path.
		colon, at := scpColon(u), strings.IndexByte(u, '@')
		if colon < 0 || at < 0 {
			return false // a local path, or no user
		}
		if colon < at {
			return strings.Contains(u[at:], ":")
		}
		user = u[:strings.LastIndexByte(u[:colon], '@')]
	}
	_, found := secret.Secret(user)
	return found
}

// ShownURL is a remote's address as the box shows it (box backup status): as written, unless it may
// carry a secret (credentials, or a URL whose path holds an '@', a query or a fragment, or that does not
// parse), which is then named as a refusal names it (safeURL).
func ShownURL(u string) string {
	if credentials(u) {
		return safeURL(u)
	}
	if schemeRe.MatchString(u) {
		p, err := url.Parse(u)
		if err != nil {
			return safeURL(u)
		}
		p.User = nil // a plain login is shown; egress.Shown never names one
		if egress.Shown(u) != p.String() {
			return safeURL(u) // egress cut a part that may hold a secret
		}
	} else if colon := scpColon(u); colon > 0 && strings.ContainsAny(u[colon:], "@?#") {
		return safeURL(u) // as a URL's path: what stands before an '@' there may be a token
	}
	return u
}

// hider replaces, in git's error text and the command line an Error keeps, every form in which git or the
// remote names u by its shown form (ShownURL), when that differs: u as written, u as git's own errors
// write it (anonymous), and a path holding an '@' as a remote's git repeats it ("'t0k3n@x/box.git' does
// not appear to be a git repository"). Nil when u is shown as written.
func hider(u string) *strings.Replacer {
	shown := ShownURL(u)
	if shown == u {
		return nil
	}
	pairs := []string{u, shown}
	if a := anonymous(u); a != u {
		pairs = append(pairs, a, shown)
	}
	// A remote's git names the path as git sent it: its query kept (ssh), and decoded (%40 is an '@').
	p := pathOf(u)
	forms := []string{p}
	if d := gitDecoded(p); d != p {
		forms = append(forms, d)
	}
	for _, f := range forms {
		if !strings.ContainsAny(f, "@?#") {
			continue
		}
		for _, v := range []string{f, strings.TrimPrefix(f, "/")} {
			if len(v) >= 3 { // a path of a character or two would rewrite git's own words
				pairs = append(pairs, v, "…")
			}
		}
	}
	return strings.NewReplacer(pairs...) // at each place the first pair that matches: the longest first
}

// anonymous is u as git names it in its own errors (transport_anonymize_url): from the first '@' on, after
// the scheme's "://"; as written when that '@' comes after the first '/' past "://", when u is a local
// path, or when a scheme-less u has no ':' after its '@'.
func anonymous(u string) string {
	at := strings.IndexByte(u, '@')
	if at < 0 {
		return u
	}
	if i := strings.Index(u, "://"); i >= 0 {
		if slash := strings.IndexByte(u[i+3:], '/'); slash >= 0 && i+3+slash < at {
			return u
		}
		return u[:i+3] + u[at+1:]
	}
	if scpColon(u) < 0 || !strings.ContainsRune(u[at+1:], ':') {
		return u // a local path, or not user@host:path
	}
	return u[at+1:]
}

// gitDecoded is s decoded as git decodes an address's path before it sends it (url.c): each valid %XX but
// %00 becomes its byte, anything else stays as written (url.PathUnescape refuses the whole of a path with
// one bad escape).
func gitDecoded(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil && v > 0 {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pathOf is the path of u as written, with its query: after a URL's host, or after the ':' of host:path;
// "" for a local path.
func pathOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 && schemeRe.MatchString(u) {
		rest := u[i+3:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			return ""
		}
		return rest[slash:]
	}
	if colon := scpColon(u); colon >= 0 {
		return u[colon+1:]
	}
	return ""
}

// scpColon is where git's host ends in a scheme-less u (user@host:path: at the first ':'), or -1 when u is
// a local path (no ':', or a '/' before it).
func scpColon(u string) int {
	colon := strings.IndexByte(u, ':')
	if colon < 0 || strings.ContainsRune(u[:colon], '/') {
		return -1
	}
	return colon
}

// shownURL is u quoted for a refusal, as safeURL gives it.
func shownURL(u string) string { return fmt.Sprintf("%q", safeURL(u)) }

// safeURL is u named without what may be a secret: a URL as egress names an address (no user name,
// query or fragment; a path holding an '@' cut); one that does not parse without what stands before its
// last '@'; user@host:path without its user ("…@host:path"); and anything after a '?' or '#'.
func safeURL(u string) string {
	if prefix := schemeRe.FindString(u); prefix != "" {
		if s := egress.Shown(u); s != "" {
			return s
		}
		if at := strings.LastIndexByte(u, '@'); at >= 0 { // a scheme holds no '@'
			u = prefix + "…" + u[at:]
		}
	} else if colon, at := scpColon(u), strings.IndexByte(u, '@'); colon > 0 && at >= 0 {
		// As credentials reads it: git's host ends at the first ':', and user:password@host:path has a ':'
		// on both sides of its '@'.
		if at < colon {
			u = "…" + u[strings.LastIndexByte(u[:colon], '@'):]
		} else if strings.ContainsRune(u[at:], ':') {
			u = "…" + u[at:]
		}
		if i := strings.IndexByte(u, ':'); strings.ContainsRune(u[i:], '@') { // a path '@', as egress cuts one
			u = u[:i+1] + "…"
		}
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i] + "?…"
	}
	return u
}
