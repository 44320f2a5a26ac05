package git

import (
	"fmt"
	"io"
	"net/url"
	"strings"
)

// The box's askpass (docs/BACKUP.md): for a push, fetch or clone over http(s) with a token, git is told
// to run the box binary itself as GIT_ASKPASS, with the token in that one git process's environment.
// The binary's main calls Askpass first; with the marker set it answers git's prompt and exits.
const (
	askpassMarker = "BOX_GIT_ASKPASS"
	askpassToken  = "BOX_GIT_ASKPASS_TOKEN"
	askpassUser   = "BOX_GIT_ASKPASS_USER"
	askpassOrigin = "BOX_GIT_ASKPASS_ORIGIN"
)

// Askpass answers one git credential prompt when this process was started as the box's askpass (the
// marker is in the environment): the user name for "Username for 'URL': ", the token for "Password for
// 'URL': ", and nothing (exit 1) for another prompt or a URL of another origin than the token's, so a
// redirect to another host never receives it. ok is false when the marker is absent: the caller goes
// on as the box. cmd/box's main starts with:
//
//	if code, ok := git.Askpass(os.Args[1:], os.Getenv, os.Stdout); ok {
//		os.Exit(code)
//	}
func Askpass(args []string, getenv func(string) string, stdout io.Writer) (code int, ok bool) {
	if getenv(askpassMarker) != "1" {
		return 0, false
	}
	if len(args) != 1 {
		return 1, true
	}
	kind, rest, _ := strings.Cut(args[0], " for '")
	u, _, found := strings.Cut(rest, "'")
	if !found || !sameOrigin(u, getenv(askpassOrigin)) {
		return 1, true
	}
	switch kind {
	case "Username":
		_, _ = fmt.Fprintln(stdout, getenv(askpassUser)) // git, reading it, fails on its own if this does
	case "Password":
		_, _ = fmt.Fprintln(stdout, getenv(askpassToken))
	default:
		return 1, true
	}
	return 0, true
}

// sameOrigin reports whether the URL git asks about is the origin the token was given for.
func sameOrigin(asked, want string) bool {
	p, err := url.Parse(asked)
	return err == nil && want != "" && origin(p) == want
}
