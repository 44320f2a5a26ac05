package git

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL: whatever CheckURL accepts is never a form that runs a program or reads as an option, nor
// a URL with a password; a refusal never repeats what stood before the address's last '@'.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"/srv/b.git", "file:///srv/b.git", "ssh://h/x", "git@h:x.git", "https://h/x.git",
		"ext::sh -c x", "fd::3", "-oProxyCommand=x:y", "https://u:p@h/x", "h:", "x::y/z", "https://u:Pw9/z@h/x",
		"https://u:%zzPw9@h/x", "u:Pw9@h:x.git", "git://u:Pw9@h/x", "https://h/x?private_token=glpat-Pw9Pw9Pw9Pw9Pw9Pw9Pw9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		err := CheckURL(u)
		if err != nil {
			// The user part: before the '@' that ends a URL's authority, or the host of user@host:path.
			var head string
			if m := schemeRe.FindString(u); m != "" {
				auth := u[len(m):]
				if i := strings.IndexAny(auth, "/?#"); i >= 0 {
					auth = auth[:i]
				}
				if at := strings.LastIndexByte(auth, '@'); at >= 0 {
					head = auth[:at]
				}
			} else if colon := scpColon(u); colon > 0 {
				if at := strings.LastIndexByte(u[:colon], '@'); at >= 0 {
					head = u[:at]
				}
			}
			if len(head) >= 12 && strings.Contains(err.Error(), head[len(head)-12:]) && strings.Count(u, head[len(head)-12:]) == 1 {
				t.Fatalf("CheckURL(%q) repeats what stands before its '@': %v", u, err)
			}
			return
		}
		if strings.HasPrefix(u, "-") || helperRe.MatchString(u) || strings.ContainsAny(u, "\n\r\x00") {
			t.Fatalf("CheckURL accepted %q", u)
		}
		if p, perr := url.Parse(u); perr == nil && p.User != nil && schemeRe.MatchString(u) { // "//:@" is a local path
			if _, ok := p.User.Password(); ok {
				t.Fatalf("CheckURL accepted %q, which holds a password", u)
			}
		}
	})
}

// FuzzParseConfigList: any output yields settings without the box's own command-line scope.
func FuzzParseConfigList(f *testing.F) {
	f.Add([]byte("local\x00core.bare\nfalse\x00command\x00a.b\nc\x00"))
	f.Add([]byte("worktree\x00filter.evil.clean\ntouch x\x00local\x00include.path\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		for _, s := range parseConfigList(out) {
			if s.scope == "command" || s.key == "" || strings.Contains(s.key, "\n") {
				t.Fatalf("setting %+v from %q", s, out)
			}
		}
	})
}

// FuzzPickBranch: a branch picked is one the listing names.
func FuzzPickBranch(f *testing.F) {
	f.Add("ref: refs/heads/main\tHEAD\nabc\tHEAD\nabc\trefs/heads/main\n")
	f.Add("ref: refs/heads/gone\tHEAD\nabc\trefs/heads/trunk\n")
	f.Add("abc\trefs/heads/a\nabc\trefs/heads/b\n")
	f.Fuzz(func(t *testing.T, out string) {
		b, err := pickBranch(out)
		if err == nil && !strings.Contains(out, "\trefs/heads/"+b) {
			t.Fatalf("picked %q from %q", b, out)
		}
	})
}
