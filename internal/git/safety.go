package git

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/boxmem/box/internal/errs"
)

// Git reads the repository's own configuration (.git/config, and config.worktree when enabled) on every
// command, and some keys there name a program git runs. docs/SECURITY.md ("Git") lists them and what
// holds each: a key with a fixed name is overridden on every call (neutral, and the environment in env),
// and a key whose name the repository chooses (a filter, diff or merge driver, an include) makes the box
// refuse to run git until the owner removes it, with a sentence that names the key and the command.
// The diff keys are refused though no command the box runs prints a patch today: refusing them keeps
// the box immune when one does.

// neutral is passed as -c to every command, after fixedConfig (which turns hooks and commit signing off):
// each overrides a repository key that would make git run a program. The environment (env) overrides
// the rest: the editors, the askpass, ssh, the attributes of the system, the protocols, the work tree.
var neutral = []string{
	"core.fsmonitor=false",          // a program run on every status and index refresh
	"core.attributesFile=/dev/null", // attributes name drivers; the repository's own drivers are refused
	"core.askPass=",                 // an empty askpass never runs (GIT_ASKPASS wins anyway)
	"credential.helper=",            // an empty helper empties the list: the repository's helpers never run
	"submodule.recurse=false",       // no submodule is fetched or checked out
	"diff.ignoreSubmodules=all",     // a nested repository is never entered to see whether it changed (its own config could run a program)
	"log.showSignature=false",       // verifying a signature runs gpg.program
	"tag.gpgSign=false",             // signing runs gpg.program, for a tag
	"push.gpgSign=false",            // or for a push certificate
}

// sshCommand is the ssh git runs for a push, a fetch or a clone: the owner's ssh and agent, never a
// prompt (a background job has no one to answer).
const sshCommand = "ssh -o BatchMode=yes"

// allowedProtocols are the transports git may use (GIT_ALLOW_PROTOCOL): never ext:: or fd::, which run
// programs, nor git:// (whose core.gitProxy is a program), nor a remote helper the repository names.
const allowedProtocols = "file:ssh:https:http"

// refusedKey reports whether a repository key (as `git config --list` prints it: section and name in
// lower case, the subsection as written) names a program that no fixed override can silence, because
// its name is the repository's choice. transport adds the keys that can redirect a push or a fetch, or
// hand the token to someone else.
func refusedKey(key string, transport bool) bool {
	section, name, sub := splitKey(key)
	switch section {
	case "include", "includeif":
		return name == "path" // a file outside the box's control could say anything, and change after the check
	case "filter":
		return sub != "" && (name == "clean" || name == "smudge" || name == "process")
	case "diff":
		return sub == "" && name == "external" || sub != "" && (name == "command" || name == "textconv")
	case "merge":
		return sub != "" && name == "driver"
	case "trailer":
		return sub != "" && (name == "command" || name == "cmd")
	case "core":
		return name == "alternaterefscommand"
	case "extensions":
		return name == "partialclone" // a missing object would be fetched from a remote, running its upload-pack
	case "remote":
		return sub != "" && name == "promisor"
	case "hook":
		return name == "command" || name == "run" // configured hooks (newer git) are not covered by core.hooksPath
	case "url":
		return transport && (name == "insteadof" || name == "pushinsteadof")
	case "http":
		return transport // a proxy, a header, a cookie file or TLS switched off could send the token elsewhere
	}
	return false
}

// splitKey splits "filter.evil.clean" into its section, name and subsection.
func splitKey(key string) (section, name, sub string) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return key, "", ""
	}
	section, name = key[:first], key[last+1:]
	if last > first {
		sub = key[first+1 : last]
	}
	return section, name, sub
}

// setting is one key of the repository's configuration and where it came from.
type setting struct {
	scope string // "local" or "worktree"
	key   string
}

// scan is what the box last read of one repository's configuration: the bytes it scanned and the keys
// found there that name programs.
type scan struct {
	config, worktree []byte
	keys             []setting
}

var scans sync.Map // git dir → *scan

// Check is the check every Run makes, for a caller that must know before it writes anything: the box's
// write transaction asks first, so a refused configuration leaves the tree as it was.
func (r *Repo) Check(ctx context.Context) error { return r.checkConfig(ctx, false) }

// checkConfig refuses to run git while the repository's configuration sets a key refusedKey names. The
// scan is cached against the bytes of the config files (includes are refused, so nothing else counts):
// an unchanged configuration costs two small reads and no process.
func (r *Repo) checkConfig(ctx context.Context, transport bool) error {
	s, err := r.configScan(ctx)
	if err != nil {
		return err
	}
	for _, k := range s.keys {
		if refusedKey(k.key, transport) {
			return refusal(k)
		}
	}
	return nil
}

// checkTransport is checkConfig for a push, fetch or clone that names the remote by its URL u. Git reads
// `git push -- <u>` as the remote named u when one is configured, so a section [remote "<u>"] would
// give that call its pushurl, url, proxy, vcs or receivepack: any key there is refused. A u without a
// slash is also a name git looks up in .git/remotes/ and .git/branches/, refused the same way.
func (r *Repo) checkTransport(ctx context.Context, u string) error {
	if err := r.checkConfig(ctx, true); err != nil {
		return err
	}
	s, err := r.configScan(ctx)
	if err != nil {
		return err
	}
	for _, k := range s.keys {
		if section, _, sub := splitKey(k.key); section == "remote" && sub == u {
			return refusal(k)
		}
	}
	if !strings.ContainsRune(u, '/') {
		for _, dir := range []string{"remotes", "branches"} {
			if _, err := os.Lstat(filepath.Join(r.GitDir(), dir, u)); err == nil {
				return errs.E("git.config", errs.Refused,
					"The box's git repository has a file .git/%s/%s, which would redirect the push; the owner removes it in the box's folder (rm %s).",
					dir, u, shellQuote(".git/"+dir+"/"+u))
			}
		}
	}
	return nil
}

func (r *Repo) configScan(ctx context.Context) (*scan, error) {
	gd := r.GitDir()
	config, err := os.ReadFile(filepath.Join(gd, "config"))
	if errors.Is(err, fs.ErrNotExist) {
		return &scan{}, nil // no repository yet (init): git reads no repository configuration either
	}
	cacheable := err == nil // a .git file (a linked worktree) is scanned on every call
	worktree, _ := os.ReadFile(filepath.Join(gd, "config.worktree"))
	if v, ok := scans.Load(gd); ok && cacheable {
		if s := v.(*scan); bytes.Equal(s.config, config) && bytes.Equal(s.worktree, worktree) {
			return s, nil
		}
	}
	out, err := r.run(ctx, call{}, "config", "--list", "-z", "--show-scope")
	if err != nil {
		return nil, errs.Wrap("git.config", errs.Other, err, "The box could not read its git repository's configuration")
	}
	s := &scan{config: config, worktree: worktree, keys: parseConfigList(out)}
	if cacheable {
		scans.Store(gd, s)
	}
	return s, nil
}

// parseConfigList reads `git config --list -z --show-scope`: "scope NUL key LF value NUL", repeated. Only
// the repository's own scopes count; the box's own -c settings are scope "command".
func parseConfigList(out []byte) []setting {
	var keys []setting
	f := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		scope := f[i]
		key, _, _ := strings.Cut(f[i+1], "\n")
		if scope == "command" || key == "" {
			continue
		}
		keys = append(keys, setting{scope: scope, key: key})
	}
	return keys
}

// refusal is the sentence for a refused key: what it is, why nothing runs, and the command that removes it
// (run in the box's folder; the sentence may reach a remote assistant, so it names no host path).
func refusal(k setting) error {
	where, flag := ".git/config", ""
	if k.scope == "worktree" {
		where, flag = ".git/config.worktree", " --worktree"
	}
	return errs.E("git.config", errs.Refused,
		"The box's git repository sets %s in %s, which makes git run a program or send the box elsewhere, so the box runs no git command while it is set; the owner removes it in the box's folder with: git config%s --unset-all %s",
		k.key, where, flag, shellQuote(k.key))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
