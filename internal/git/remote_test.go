package git

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// TestMain makes the test binary the box's askpass, as cmd/box's main does: git runs it with the marker
// set, and it answers the prompt instead of running the tests.
func TestMain(m *testing.M) {
	if code, ok := Askpass(os.Args[1:], os.Getenv, os.Stdout); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// plain runs git as a person would, outside the box's hardening, and returns its trimmed output.
func plain(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// bare makes an empty bare repository and returns its path.
func bare(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "backup.git")
	plain(t, t.TempDir(), "init", "-q", "--bare", dir)
	return dir
}

// commit writes a file and commits it through the box's own calls.
func commit(t *testing.T, r *Repo, path, text string) string {
	t.Helper()
	put(t, r, path, text)
	if err := r.Add(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	h, err := r.Commit(context.Background(), "write "+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func remoteNamed(t *testing.T, r *Repo, name string) Remote {
	t.Helper()
	rs, err := r.Remotes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, rm := range rs {
		if rm.Name == name {
			return rm
		}
	}
	t.Fatalf("no remote %s in %+v", name, rs)
	return Remote{}
}

func TestCheckURL(t *testing.T) {
	const tokenBody = "R7xq2Lm9Vb4Nc8Kd1Ws5Tz3Hj6Pf0Ga2Ye4Uo7" // 36 characters, as a GitHub token's
	for u, ok := range map[string]bool{
		"/srv/backup/box.git": true, "file:///srv/backup/box.git": true, "file://localhost/srv/b.git": true,
		"ssh://git@host.example/box.git": true, "ssh://host.example:2222/~/box.git": true, "git@github.com:mira/box.git": true,
		"https://github.com/mira/box.git": true, "https://mira@gitea.example/mira/box.git": true, "http://127.0.0.1:3000/box.git": true,
		"": false, "ext::sh -c touch% /tmp/pwned": false, "fd::7": false, "EXT::sh": false, "foo::bar": false,
		"git://host.example/box.git": false, "ftp://host.example/box.git": false, "rsync://host/x": false,
		"https://mira:hunter2@github.com/mira/box.git": false, "-uhttps://x": false, "--upload-pack=touch /tmp/x": false,
		"ssh://-oProxyCommand=touch/x": false, "-oProxyCommand=x:path": false, "backup.git": false, "../backup.git": false,
		"file://relative/x.git": false, "https://host.example/x\n.git": false, "host:": false,
		"https://ghp_" + tokenBody + "@github.com/mira/box.git": false, "ghp_" + tokenBody + "@github.com:mira/box.git": false,
		"ssh://glpat-" + tokenBody[:20] + "@gitlab.example/box.git": false, "https://github.com/mira/a@b.git": true,
		"/srv/backup/a@b.git": true, "https://host.example:8443/a@b.git": true, "git://mira:hunter2@host.example/x.git": false,
		"ftp://ghp_" + tokenBody + "@host.example/x": false,
		// url.Parse cannot read these passwords ('/' or '%' in them), and its own words would quote them.
		"https://mira:Xy7hunter2/z@github.com/box.git": false, "https://mira:%zzhunter2@github.com/box.git": false,
		"git@host.example:a@b.git": true, "host.example:a@b.git": true, "git@host.example:team@x/box.git": true,
		"ghp_" + tokenBody + ":x@github.com:me/box.git": false, "mira:hunter2@host.example:box.git": false,
		"https://ghp_" + tokenBody + "@github.com:me/box.git": false, "https://gitlab.example/me/box.git?private_token=glpat-" + tokenBody[:20]: false,
	} {
		if err := CheckURL(u); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want ok %v", u, err, ok)
		} else if err != nil && errs.KindOf(err) != errs.Invalid {
			t.Errorf("CheckURL(%q): kind %v", u, errs.KindOf(err))
		} else if err != nil && (strings.Contains(err.Error(), tokenBody[:20]) || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "Xy7")) {
			t.Errorf("CheckURL(%q) repeats the secret: %v", u, err)
		}
	}
}

// A remote already holding a password or a token (added before the box refused them, or by git remote
// set-url) is shown without it; a plain login is shown as written.
func TestShownURL(t *testing.T) {
	const token = "ghp_R7xq2Lm9Vb4Nc8Kd1Ws5Tz3Hj6Pf0Ga2Ye4Uo7"
	for u, want := range map[string]string{
		"https://" + token + "@github.com/me/box.git":              "https://github.com/me/box.git",
		"https://mira:hunter2@github.com/me/box.git":               "https://github.com/me/box.git",
		"https://gitlab.example/me/box.git?private_token=" + token: "https://gitlab.example/me/box.git?…",
		"https://" + token + "@github.com:me/box.git":              "https://…@github.com:me/box.git",
		"https://mira:1234/hunter2@github.com/box.git":             "https://mira:1234/…",
		"https://host.example/x.git#" + token:                      "https://host.example/x.git?…",
		"mira:hunter2@host.example:box.git":                        "…@host.example:box.git",
		token + "@host.example:a@b.git":                            "…@host.example:…",
		"https://mira@gitea.example/mira/box.git":                  "https://mira@gitea.example/mira/box.git",
		"ssh://git@host.example:2222/box.git":                      "ssh://git@host.example:2222/box.git",
		"git@github.com:mira/box.git":                              "git@github.com:mira/box.git",
		"git@host.example:a@b.git":                                 "…@host.example:…",
		"host.example:" + token + "@x/box.git":                     "host.example:…",
		"/srv/backup/box.git":                                      "/srv/backup/box.git",
	} {
		if got := ShownURL(u); got != want {
			t.Errorf("ShownURL(%q) = %q, want %q", u, got, want)
		}
	}
}

// transport's refusals name the address as status shows it: a password read as a port is not repeated,
// and two addresses that look alike once shown are said to differ.
func TestTransportRefusalsNameNoSecret(t *testing.T) {
	auth := Auth{Token: "t", Askpass: "/usr/bin/box", URL: "https://github.com/me/box.git"}
	if _, err := transport("http://mira:1234/hunter2@host.example/x", auth); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("plain http: %v", err)
	}
	_, err := transport("https://mira@github.com/me/box.git", auth)
	if err == nil || !strings.Contains(err.Error(), "now https://mira@github.com/me/box.git, but") { // the login tells them apart
		t.Errorf("conflict: %v", err)
	}
	_, err = transport("https://github.com/me/a@b.git", Auth{Token: "t", Askpass: "/usr/bin/box", URL: "https://github.com/me/c@d.git"})
	if err == nil || !strings.Contains(err.Error(), "differs in a part the box does not show") {
		t.Errorf("conflict of two addresses shown alike: %v", err)
	}
}

// A push that fails names its address as status shows it: git's own words and the command line an Error
// keeps repeat the address as written, and a path '@' or a query may hold a secret.
func TestAFailedPushNamesTheAddressAsShown(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	commit(t, r, "_content/a.md", "one\n")
	for i, u := range []string{"http://127.0.0.1:1/hunter2@x/box.git", "http://127.0.0.1:1/box.git?sig=hunter2",
		// git names these without what stands before their first '@'
		"http://mira@127.0.0.1:1/hunter2@x/box.git", "http://a@b@127.0.0.1:1/box.git?sig=hunter2"} {
		name := fmt.Sprintf("b%d", i)
		if err := r.AddRemote(ctx, name, u); err != nil {
			t.Fatal(err)
		}
		_, err := r.Push(ctx, name, false, Auth{Stall: 5 * time.Second})
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1:1/") {
			t.Errorf("push to %s: %v", u, err)
		}
	}
	// Restore reads the address the owner typed: named the same way.
	_, err := Clone(ctx, "http://127.0.0.1:1/hunter2@x/box.git", t.TempDir(), CloneOptions{Auth: Auth{Stall: 5 * time.Second}})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("clone: %v", err)
	}
}

// The forms git and a remote's git write an address in are named as shown, once each: a remote repeats
// the path ("'…' does not appear to be a git repository").
func TestHiderNamesEveryForm(t *testing.T) {
	for _, c := range []struct{ u, text, want string }{
		{"ssh://git@host.example/t0k3n@x/box.git", "fatal: '/t0k3n@x/box.git' does not appear to be a git repository",
			"fatal: '…' does not appear to be a git repository"},
		{"git@host.example:t0k3n@x/box.git", "fatal: 't0k3n@x/box.git' does not appear to be a git repository",
			"fatal: '…' does not appear to be a git repository"},
		{"ssh://git@h/x?", "unable to access 'ssh://h/x?/'", "unable to access 'ssh://h/x?…/'"},
		// git sends the path decoded, and over ssh with its query: a remote repeats it so.
		{"ssh://git@host.example/t0k3n%40x/box.git", "fatal: '/t0k3n@x/box.git' does not appear to be a git repository",
			"fatal: '…' does not appear to be a git repository"},
		{"ssh://git@host.example/t0k3n%40x%00/box.git?a=%zz", "fatal: '/t0k3n@x%00/box.git?a=%zz' does not appear to be a git repository",
			"fatal: '…' does not appear to be a git repository"},
		{"git@host.example:box.git?sig=t0k3n", "fatal: 'box.git?sig=t0k3n' does not appear to be a git repository",
			"fatal: '…' does not appear to be a git repository"},
		{"ssh://git@host.example/@", "git@host.example: Permission denied (publickey).", "git@host.example: Permission denied (publickey)."},
		{"https://github.com/me/box.git", "unable to access 'https://github.com/me/box.git/'", ""},
	} {
		h := hider(c.u)
		if c.want == "" {
			if h != nil {
				t.Errorf("hider(%q) hides an address shown as written", c.u)
			}
			continue
		}
		if got := h.Replace(c.text); got != c.want {
			t.Errorf("hider(%q): %q, want %q", c.u, got, c.want)
		}
	}
	for u, want := range map[string]string{"http://a@b@h/x": "http://b@h/x", "https://h/a@b": "https://h/a@b",
		"git@h:x": "h:x", "/srv/a@b:c": "/srv/a@b:c", "a@b": "a@b"} {
		if got := anonymous(u); got != want {
			t.Errorf("anonymous(%q) = %q, want %q", u, got, want)
		}
	}
}

func TestPushToBareRepositories(t *testing.T) {
	ctx := context.Background()
	for _, form := range []string{"path", "file URL"} {
		t.Run(form, func(t *testing.T) {
			r := mustRepo(t)
			commit(t, r, "_content/a.md", "one\n")
			head := commit(t, r, "_content/b.md", "two\n")
			dst := bare(t)
			u := dst
			if form == "file URL" {
				u = "file://" + dst
			}
			if err := r.AddRemote(ctx, "usb", u); err != nil {
				t.Fatal(err)
			}
			if err := r.AddRemote(ctx, "usb", u); errs.KindOf(err) != errs.Exists {
				t.Errorf("a second remote of the same name: %v", err)
			}
			if rm := remoteNamed(t, r, "usb"); rm.Behind != 2 || rm.Pushed != "" || rm.URL != u {
				t.Errorf("before any push: %+v", rm)
			}
			res, err := r.Push(ctx, "usb", false, Auth{})
			if err != nil || res.Commit != head || res.Branch != "main" || res.Unchanged {
				t.Fatalf("push: %+v %v", res, err)
			}
			if got := plain(t, dst, "rev-parse", "refs/heads/main"); got != head {
				t.Errorf("the bare repository's main is %s, want %s", got, head)
			}
			if rm := remoteNamed(t, r, "usb"); rm.Behind != 0 || rm.Pushed != head {
				t.Errorf("after the push: %+v", rm)
			}
			next := commit(t, r, "_content/c.md", "three\n")
			if rm := remoteNamed(t, r, "usb"); rm.Behind != 1 {
				t.Errorf("one commit later: %+v", rm)
			}
			if res, err := r.Push(ctx, "usb", false, Auth{}); err != nil || res.Commit != next {
				t.Fatalf("second push: %+v %v", res, err)
			}
			if res, err := r.Push(ctx, "usb", false, Auth{}); err != nil || !res.Unchanged {
				t.Errorf("a push with nothing new: %+v %v", res, err)
			}
			if _, err := r.Push(ctx, "nope", false, Auth{}); errs.KindOf(err) != errs.NotFound {
				t.Errorf("push to an unknown backup: %v", err)
			}
			if err := r.RemoveRemote(ctx, "usb"); err != nil {
				t.Fatal(err)
			}
			if rs, _ := r.Remotes(ctx); len(rs) != 0 {
				t.Errorf("after remove: %+v", rs)
			}
			if out, _ := r.Run(ctx, nil, "for-each-ref", "refs/remotes/"); len(out) > 0 {
				t.Errorf("what the box knew of the remote stayed: %s", out)
			}
		})
	}
}

// A remote the owner made for something else is not the box's: it is not listed, pushed to or removed.
func TestRemotesAreOnlyTheBoxs(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	commit(t, r, "a.md", "one\n")
	plain(t, r.Dir, "remote", "add", "origin", bare(t))
	if rs, err := r.Remotes(ctx); err != nil || len(rs) != 0 {
		t.Errorf("the owner's own remote is listed: %+v %v", rs, err)
	}
	if _, err := r.Push(ctx, "origin", false, Auth{}); errs.KindOf(err) != errs.NotFound {
		t.Errorf("push to the owner's own remote: %v", err)
	}
	if err := r.RemoveRemote(ctx, "origin"); errs.KindOf(err) != errs.NotFound {
		t.Errorf("remove the owner's own remote: %v", err)
	}
	if err := r.AddRemote(ctx, "origin", bare(t)); errs.KindOf(err) != errs.Exists {
		t.Errorf("add over the owner's own remote: %v", err)
	}
	for _, bad := range []string{"Usb", "u sb", "-x", "a/b", ""} {
		if err := r.AddRemote(ctx, bad, bare(t)); errs.KindOf(err) != errs.Invalid {
			t.Errorf("name %q: %v", bad, err)
		}
	}
}

// Erase rewrites history: a plain push is refused, a forced one replaces the remote's branch.
func TestForcePushOfARewrittenHistory(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	commit(t, r, "a.md", "secret one\n")
	commit(t, r, "b.md", "secret two\n")
	dst := bare(t)
	if err := r.AddRemote(ctx, "usb", dst); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "usb", false, Auth{}); err != nil {
		t.Fatal(err)
	}
	// The fresh root an erase leaves: one commit with no parent.
	put(t, r, "a.md", "")
	os.Remove(filepath.Join(r.Dir, "b.md"))
	r.Add(ctx, "a.md", "b.md")
	tree, _ := r.Run(ctx, nil, "write-tree")
	root, err := r.Run(ctx, []byte("erased\n"), "commit-tree", strings.TrimSpace(string(tree)))
	if err != nil {
		t.Fatal(err)
	}
	fresh := strings.TrimSpace(string(root))
	if _, err := r.Run(ctx, nil, "update-ref", "refs/heads/main", fresh); err != nil {
		t.Fatal(err)
	}
	if rm := remoteNamed(t, r, "usb"); rm.Behind != 1 {
		t.Errorf("a rewritten history of one commit: %+v", rm)
	}
	if _, err := r.Push(ctx, "usb", false, Auth{}); errs.KindOf(err) != errs.Conflict {
		t.Fatalf("a plain push over a rewritten history: %v", err)
	}
	if res, err := r.Push(ctx, "usb", true, Auth{}); err != nil || res.Commit != fresh {
		t.Fatalf("force push: %+v %v", res, err)
	}
	if got := plain(t, dst, "rev-list", "--count", "refs/heads/main"); got != "1" {
		t.Errorf("the remote's main holds %s commits after the force push, want the fresh root only", got)
	}
	if rm := remoteNamed(t, r, "usb"); rm.Behind != 0 || rm.Pushed != fresh {
		t.Errorf("after the force push: %+v", rm)
	}
}

func TestCloneTakesMainOrTheOnlyBranch(t *testing.T) {
	ctx := context.Background()
	src := mustRepo(t)
	commit(t, src, "_content/a.md", "kept\n")
	want := plain(t, src.Dir, "rev-parse", "HEAD")
	for _, tc := range []struct {
		name   string
		setup  func(dst string)
		branch string // the source branch restored, "" = refused
	}{
		{"main", func(dst string) { plain(t, src.Dir, "push", "-q", dst, "main:main", "main:other") }, "main"},
		{"HEAD names its only branch", func(dst string) {
			plain(t, src.Dir, "push", "-q", dst, "main:trunk")
			plain(t, dst, "symbolic-ref", "HEAD", "refs/heads/trunk")
		}, "trunk"},
		{"HEAD names none, one branch", func(dst string) {
			plain(t, src.Dir, "push", "-q", dst, "main:trunk")
			plain(t, dst, "symbolic-ref", "HEAD", "refs/heads/gone")
		}, "trunk"},
		{"two branches, no main, HEAD names none", func(dst string) {
			plain(t, src.Dir, "push", "-q", dst, "main:a", "main:b")
			plain(t, dst, "symbolic-ref", "HEAD", "refs/heads/gone")
		}, ""},
		{"empty", func(string) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := bare(t)
			tc.setup(dst)
			dir := filepath.Join(t.TempDir(), "restored")
			r, err := Clone(ctx, "file://"+dst, dir, CloneOptions{Remote: "home"})
			if tc.branch == "" {
				if err == nil {
					t.Fatal("clone picked a branch it should not have")
				}
				if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
					t.Errorf("a failed clone left %s behind", dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "_content/a.md")); err != nil || string(data) != "kept\n" {
				t.Errorf("restored file: %q %v", data, err)
			}
			if b, _ := r.Branch(ctx); b != "main" {
				t.Errorf("restored branch %q, want main", b)
			}
			if h, _ := r.Head(ctx); h != want {
				t.Errorf("restored head %s, want %s", h, want)
			}
			if rm := remoteNamed(t, r, "home"); rm.Behind != 0 || rm.URL != "file://"+dst {
				t.Errorf("the source as a backup: %+v", rm)
			}
		})
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	if _, err := Clone(ctx, src.Dir, full, CloneOptions{}); errs.KindOf(err) != errs.Exists {
		t.Errorf("clone into a folder that is not empty: %v", err)
	}
	if _, err := os.Stat(filepath.Join(full, "x")); err != nil {
		t.Error("a refused clone touched the folder")
	}
	if _, err := Clone(ctx, "ext::sh -c touch% /tmp/x", filepath.Join(t.TempDir(), "r"), CloneOptions{}); errs.KindOf(err) != errs.Invalid {
		t.Errorf("clone from ext::: %v", err)
	}
}

// gitServer is a real smart-HTTP git server (git http-backend through CGI) over the bare repositories in
// root, asking for user and token with Basic auth. seen records every Authorization header it was sent.
func gitServer(t *testing.T, root, user, token string) (*httptest.Server, *[]string) {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		seen = append(seen, req.Header.Get("Authorization"))
		mu.Unlock()
		u, p, ok := req.BasicAuth()
		if !ok || u != user || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="box"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		h := &cgi.Handler{Path: backend, InheritEnv: []string{"PATH"}, Env: []string{"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + u, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func askpassBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// A token reaches the server through the box's askpass and nowhere else: not the repository's
// configuration, not an error, not another host; the repository's own credential helpers never run.
func TestPushWithATokenOverHTTP(t *testing.T) {
	ctx := context.Background()
	const token = "bx-tok-9f8e7d6c5b4a"
	root := t.TempDir()
	plain(t, root, "init", "-q", "--bare", "box.git")
	srv, seen := gitServer(t, root, "mira", token)

	r := mustRepo(t)
	head := commit(t, r, "_content/a.md", "one\n")
	aside := t.TempDir()
	marker := filepath.Join(aside, "pwned")
	pwn := filepath.Join(aside, "pwn.sh")
	os.WriteFile(pwn, []byte(fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >> %s\n", marker)), 0o755)
	plain(t, r.Dir, "config", "credential.helper", "!"+pwn)
	plain(t, r.Dir, "config", "credential."+srv.URL+".helper", "!"+pwn)
	plain(t, r.Dir, "config", "core.askPass", pwn)

	u := srv.URL + "/box.git"
	if err := r.AddRemote(ctx, "home", u); err != nil {
		t.Fatal(err)
	}
	auth := Auth{Token: token, User: "mira", Askpass: askpassBinary(t), URL: u}
	if _, err := r.Push(ctx, "home", false, Auth{}); errs.KindOf(err) != errs.Unauthorized {
		t.Errorf("a push without the token: %v", err)
	}
	wrong := auth
	wrong.Token = "bx-tok-wrong-0000"
	if _, err := r.Push(ctx, "home", false, wrong); errs.KindOf(err) != errs.Unauthorized || strings.Contains(err.Error(), wrong.Token) {
		t.Errorf("a push with a wrong token: %v", err)
	}
	res, err := r.Push(ctx, "home", false, auth)
	if err != nil || res.Commit != head {
		t.Fatalf("push with the token: %+v %v", res, err)
	}
	if got := plain(t, filepath.Join(root, "box.git"), "rev-parse", "refs/heads/main"); got != head {
		t.Errorf("the server's main is %s, want %s", got, head)
	}
	if data, _ := os.ReadFile(marker); len(data) > 0 {
		t.Errorf("the repository's own credential helper or askpass ran: %s", data)
	}
	cfg, _ := os.ReadFile(filepath.Join(r.Dir, ".git", "config"))
	if strings.Contains(string(cfg), token) {
		t.Error("the token is in .git/config")
	}
	if len(*seen) == 0 {
		t.Fatal("the server saw no request")
	}

	// Restore over the same server: a clone with the token.
	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := Clone(ctx, u, dir, CloneOptions{Auth: auth}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "_content/a.md")); err != nil || string(data) != "one\n" {
		t.Errorf("restored over http: %q %v", data, err)
	}

	// A token for plain http is kept to this machine.
	if err := CheckURL("http://backup.example/box.git"); err != nil {
		t.Fatal(err)
	}
	if _, err := transport("http://backup.example/box.git", auth); errs.KindOf(err) != errs.Refused {
		t.Errorf("a token over plain http to another machine: %v", err)
	}
}

// A server that redirects to another host never receives the token there.
func TestTokenNeverFollowsARedirect(t *testing.T) {
	ctx := context.Background()
	const token = "bx-tok-1a2b3c4d5e6f"
	other, seen := gitServer(t, t.TempDir(), "mira", "another-token")
	first := httptest.NewServer(http.RedirectHandler(other.URL+"/box.git/info/refs?service=git-receive-pack", http.StatusFound))
	t.Cleanup(first.Close)
	r := mustRepo(t)
	commit(t, r, "a.md", "one\n")
	if err := r.AddRemote(ctx, "home", first.URL+"/box.git"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "home", false, Auth{Token: token, User: "mira", Askpass: askpassBinary(t), URL: first.URL + "/box.git"}); err == nil {
		t.Fatal("a push through a redirect to another host succeeded")
	}
	if len(*seen) == 0 {
		t.Fatal("git did not follow the redirect: the test shows nothing")
	}
	for _, h := range *seen {
		if strings.Contains(h, "Basic") {
			t.Errorf("the other host received credentials: %q", h)
		}
	}
}

// A token goes only to the address it was added for: a remote whose URL was changed in .git/config
// (git remote set-url, by hand) is refused before git runs, and the new address hears nothing.
func TestTokenStaysWithItsAddress(t *testing.T) {
	ctx := context.Background()
	const token = "bx-tok-0a9b8c7d6e5f"
	root := t.TempDir()
	plain(t, root, "init", "-q", "--bare", "box.git")
	srv, seen := gitServer(t, root, "mira", token)
	evil, evilSeen := gitServer(t, t.TempDir(), "mira", "whatever")
	r := mustRepo(t)
	commit(t, r, "a.md", "one\n")
	u := srv.URL + "/box.git"
	if err := r.AddRemote(ctx, "home", u); err != nil {
		t.Fatal(err)
	}
	auth := Auth{Token: token, User: "mira", Askpass: askpassBinary(t), URL: u}
	if _, err := r.Push(ctx, "home", false, auth); err != nil {
		t.Fatal(err)
	}
	plain(t, r.Dir, "remote", "set-url", "home", evil.URL+"/box.git")
	_, err := r.Push(ctx, "home", false, auth)
	if errs.KindOf(err) != errs.Conflict || !strings.Contains(err.Error(), "its token was added for "+u) || !strings.Contains(err.Error(), "box backup add") || strings.Contains(err.Error(), token) {
		t.Fatalf("a push to the moved remote: %v", err)
	}
	if len(*evilSeen) != 0 {
		t.Errorf("the new address got %d requests", len(*evilSeen))
	}
	// A token kept without its address is never sent either.
	n := len(*seen)
	plain(t, r.Dir, "remote", "set-url", "home", u)
	if _, err := r.Push(ctx, "home", false, Auth{Token: token, User: "mira", Askpass: askpassBinary(t)}); errs.KindOf(err) != errs.Conflict {
		t.Errorf("a token without its address: %v", err)
	}
	if len(*seen) != n {
		t.Error("a token without its address reached the server")
	}
	if _, err := Clone(ctx, evil.URL+"/box.git", filepath.Join(t.TempDir(), "c"), CloneOptions{Auth: auth}); errs.KindOf(err) != errs.Conflict || len(*evilSeen) != 0 {
		t.Errorf("a clone from another address with the token: %v", err)
	}
}

func TestAskpassAnswersOnlyItsOrigin(t *testing.T) {
	env := map[string]string{askpassMarker: "1", askpassToken: "tok", askpassUser: "mira", askpassOrigin: "https://host.example:443"}
	getenv := func(k string) string { return env[k] }
	for prompt, want := range map[string]string{
		"Username for 'https://host.example': ":           "mira\n",
		"Password for 'https://mira@host.example': ":      "tok\n",
		"Password for 'https://mira@host.example:443': ":  "tok\n",
		"Password for 'https://mira@evil.example': ":      "",
		"Password for 'http://mira@host.example': ":       "",
		"Password for 'https://mira@host.example:8443': ": "",
		"Are you sure you want to continue connecting?":   "",
		"Enter passphrase for key '/home/mira/.ssh/id': ": "",
	} {
		var out strings.Builder
		code, ok := Askpass([]string{prompt}, getenv, &out)
		if !ok || out.String() != want || (want == "") != (code != 0) {
			t.Errorf("%q: code %d ok %v out %q, want %q", prompt, code, ok, out.String(), want)
		}
	}
	if _, ok := Askpass([]string{"Password for 'https://host.example': "}, func(string) string { return "" }, &strings.Builder{}); ok {
		t.Error("without the marker the binary must run as the box")
	}
}

// An ssh remote gets the owner's agent; the repository's receive-pack, ssh command and proxy never run.
// ssh here is a stand-in on PATH that runs the remote command locally, as a real server would.
func TestPushOverSSHUsesTheAgentOnly(t *testing.T) {
	ctx := context.Background()
	bin, aside := t.TempDir(), t.TempDir()
	record, marker := filepath.Join(aside, "ssh-env"), filepath.Join(aside, "pwned")
	os.WriteFile(filepath.Join(bin, "ssh"), []byte(fmt.Sprintf(`#!/bin/sh
echo "agent=$SSH_AUTH_SOCK token=$%s args=$*" >> %s
for last; do :; done
exec sh -c "$last"
`, askpassToken, record)), 0o755)
	pwn := filepath.Join(aside, "pwn.sh")
	os.WriteFile(pwn, []byte(fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >> %s\nexec git-receive-pack \"$@\"\n", marker)), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("SSH_AUTH_SOCK", "/run/agent.sock")

	r := mustRepo(t)
	head := commit(t, r, "a.md", "one\n")
	dst := bare(t)
	for name, u := range map[string]string{"ssh": "ssh://backup.example" + dst, "scp": "backup.example:" + dst} {
		if err := r.AddRemote(ctx, name, u); err != nil {
			t.Fatal(err)
		}
		plain(t, r.Dir, "config", "remote."+name+".receivepack", pwn)
	}
	plain(t, r.Dir, "config", "core.sshCommand", pwn)
	for _, name := range []string{"ssh", "scp"} {
		if _, err := r.Push(ctx, name, true, Auth{Token: "never-for-ssh", Askpass: askpassBinary(t)}); err != nil {
			t.Fatalf("push over %s: %v", name, err)
		}
	}
	if got := plain(t, dst, "rev-parse", "refs/heads/main"); got != head {
		t.Errorf("the remote's main is %s, want %s", got, head)
	}
	rec, _ := os.ReadFile(record)
	if n := strings.Count(string(rec), "agent=/run/agent.sock token= "); n != 2 {
		t.Errorf("ssh ran %d times with the agent and no token:\n%s", n, rec)
	}
	// ssh gives up on a server that stops answering: a connect timeout (the handshake too) and keep-alives.
	if n := strings.Count(string(rec), "-o BatchMode=yes -o ConnectTimeout=60 -o ServerAliveInterval=15 -o ServerAliveCountMax=4 "); n != 2 {
		t.Errorf("ssh ran %d times with its stall limits:\n%s", n, rec)
	}
	if data, _ := os.ReadFile(marker); len(data) > 0 {
		t.Errorf("the repository's receive-pack or ssh command ran: %s", data)
	}
	// Local commands never see the agent.
	for _, kv := range env() {
		if strings.HasPrefix(kv, "SSH_AUTH_SOCK=") {
			t.Errorf("a local git command gets %s", kv)
		}
	}
}

// For a push the repository may not redirect the remote (url.*.insteadOf) or its transport (http.*);
// a remote planted with an ext:: URL is refused before git sees it, and git refuses ext:: anyway.
func TestPushRefusesRedirectsAndProgramURLs(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	commit(t, r, "a.md", "one\n")
	aside := t.TempDir()
	marker := filepath.Join(aside, "pwned")
	if err := r.AddRemote(ctx, "usb", bare(t)); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"url.ext::sh -c touch% " + marker + ".insteadOf", "/"}, {"http.proxy", "http://127.0.0.1:9"}} {
		plain(t, r.Dir, "config", kv[0], kv[1])
		_, err := r.Push(ctx, "usb", false, Auth{})
		if errs.KindOf(err) != errs.Refused || !strings.Contains(err.Error(), "--unset-all") {
			t.Errorf("push with %s set: %v", kv[0], err)
		}
		if _, err := r.Status(ctx); err != nil {
			t.Errorf("a local command with %s set: %v", kv[0], err)
		}
		plain(t, r.Dir, "config", "--unset-all", kv[0])
	}
	plain(t, r.Dir, "config", "remote.evil.url", "ext::sh -c touch% "+marker)
	plain(t, r.Dir, "config", "remote.evil.boxbackup", "true")
	if _, err := r.Push(ctx, "evil", false, Auth{}); errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), "runs a program") && !strings.Contains(err.Error(), "run a program") {
		t.Errorf("push to a planted ext:: remote: %v", err)
	}
	if _, err := r.run(ctx, call{}, "push", "ext::sh -c touch% "+marker, "main:main"); err == nil {
		t.Error("git pushed to ext::")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("an ext:: URL ran its program")
	}
}

// `git push -- URL` reads a section [remote "URL"] as the remote named URL: its pushurl or url would
// send the box and the token elsewhere, its proxy or vcs would reach or run something else. Any key
// there refuses the push; so does a .git/remotes or .git/branches file named by a URL
// without a slash, which git reads the same way.
func TestPushRefusesARemoteNamedByItsURL(t *testing.T) {
	ctx := context.Background()
	const token = "bx-tok-5e6f7a8b9c0d"
	root := t.TempDir()
	plain(t, root, "init", "-q", "--bare", "box.git")
	plain(t, root, "init", "-q", "--bare", "attacker.git")
	srv, _ := gitServer(t, root, "mira", token)
	r := mustRepo(t)
	head := commit(t, r, "_content/a.md", "secret\n")
	u := srv.URL + "/box.git"
	if err := r.AddRemote(ctx, "home", u); err != nil {
		t.Fatal(err)
	}
	auth := Auth{Token: token, User: "mira", Askpass: askpassBinary(t), URL: u}
	for _, kv := range [][2]string{{"pushurl", srv.URL + "/attacker.git"}, {"url", srv.URL + "/attacker.git"},
		{"proxy", "http://127.0.0.1:9"}, {"vcs", "evil"}, {"receivepack", "touch /tmp/never"}} {
		key := "remote." + u + "." + kv[0]
		plain(t, r.Dir, "config", key, kv[1])
		_, err := r.Push(ctx, "home", false, auth)
		if errs.KindOf(err) != errs.Refused || !strings.Contains(err.Error(), "--unset-all") {
			t.Errorf("push with %s set: %v", key, err)
		}
		plain(t, r.Dir, "config", "--unset-all", key)
	}
	for _, repo := range []string{"attacker.git", "box.git"} {
		if out, err := exec.Command("git", "-C", filepath.Join(root, repo), "rev-parse", "-q", "--verify", "refs/heads/main").Output(); err == nil {
			t.Errorf("%s received %s while the push was refused", repo, out)
		}
	}
	if res, err := r.Push(ctx, "home", false, auth); err != nil || res.Commit != head {
		t.Fatalf("push once the keys are gone: %+v %v", res, err)
	}

	for _, dir := range []string{"remotes", "branches"} {
		os.MkdirAll(filepath.Join(r.GitDir(), dir), 0o755)
		file := filepath.Join(r.GitDir(), dir, "backup.example:box.git")
		os.WriteFile(file, []byte("URL: "+filepath.Join(root, "attacker.git")+"\n"), 0o644)
		if err := r.checkTransport(ctx, "backup.example:box.git"); errs.KindOf(err) != errs.Refused {
			t.Errorf("a push with .git/%s/backup.example:box.git: %v", dir, err)
		}
		os.Remove(file)
	}
}

// A push to a repository on this machine runs none of that repository's hooks: the box's user runs them.
func TestPushToALocalRepositoryRunsNoHook(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	head := commit(t, r, "_content/a.md", "x\n")
	marker := filepath.Join(t.TempDir(), "hooked")
	for _, form := range []string{"path", "file URL"} {
		dst := bare(t)
		for _, hook := range []string{"pre-receive", "update", "post-receive", "post-update", "reference-transaction"} {
			os.WriteFile(filepath.Join(dst, "hooks", hook), []byte("#!/bin/sh\necho "+hook+" >> "+marker+"\n"), 0o755)
		}
		u := dst
		if form == "file URL" {
			u = "file://" + dst
		}
		name := strings.ReplaceAll(form, " ", "")
		if err := r.AddRemote(ctx, strings.ToLower(name), u); err != nil {
			t.Fatal(err)
		}
		if res, err := r.Push(ctx, strings.ToLower(name), false, Auth{}); err != nil || res.Commit != head {
			t.Fatalf("push to a %s: %+v %v", form, res, err)
		}
		if got := plain(t, dst, "rev-parse", "refs/heads/main"); got != head {
			t.Errorf("the %s's main is %s, want %s", form, got, head)
		}
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Errorf("the local repository's hooks ran:\n%s", data)
	}
}

// A push to a server that accepts the connection and never answers gives up once it has sent nothing
// for Stall (curl's low-speed limit), with a failure worth retrying, instead of holding the job runner.
func TestPushToASilentServerGivesUp(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	r := mustRepo(t)
	commit(t, r, "a.md", "one\n")
	if err := r.AddRemote(ctx, "silent", "http://"+ln.Addr().String()+"/box.git"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Push(ctx, "silent", false, Auth{Stall: time.Second})
		done <- err
	}()
	select {
	case err := <-done:
		if errs.KindOf(err) != errs.Other || !strings.Contains(err.Error(), "too slow") {
			t.Fatalf("a push to a silent server: %v", err)
		}
	case <-time.After(2 * time.Minute): // a bound for a push that never gives up, far beyond its Stall
		t.Fatal("the push to a silent server did not give up")
	}
	// A push whose context ends gives up then, though git's helper (git-remote-http), still waiting out
	// its stall limit, holds git's output open.
	cut, cancel := context.WithCancel(ctx)
	go func() {
		_, err := r.Push(cut, "silent", false, Auth{Stall: 10 * time.Minute})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the push is under way: its context ends mid-push, not before it
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a push whose context ended succeeded")
		}
	case <-time.After(2 * time.Minute): // far beyond waitDelay, far below the stall limit
		t.Fatal("the push went on after its context ended")
	}
}
