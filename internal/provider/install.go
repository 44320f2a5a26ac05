package provider

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// InstallOptions say how to install a subscription CLI.
type InstallOptions struct {
	// NPM is the npm program; "" means the one on the box's PATH.
	NPM string
	// Output receives npm's own output as it goes; nil discards it.
	Output io.Writer
	// Timeout bounds the install; 0 means 10 minutes (the CLIs are native binaries of 300–400 MB).
	Timeout time.Duration
}

// Install installs the CLI at its pinned version into the subscription folder, outside the box tree:
// `npm install --prefix <Dir>/npm --save-exact <package>@<version>`, with the same kind of minimal
// environment as the CLI itself (npm's own HOME and cache under Dir; the owner's ~/.npmrc and
// environment are not read). Tests never run it against the registry by default.
func (s *Subscription) Install(ctx context.Context, opts InstallOptions) error {
	const op = "provider.install"
	npm := opts.NPM
	if npm == "" {
		p, err := exec.LookPath("npm")
		if err != nil {
			return errs.E(op, errs.NotFound, "npm is not installed on this machine; install Node.js (with npm) first, then install %s again.", s.spec.name)
		}
		npm = p
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	r, err := s.newRun()
	if err != nil {
		return err
	}
	defer r.remove()
	home := filepath.Join(s.cfg.Dir, "home", "npm")
	if err := s.privateDirs(home); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", s.prefix(), "--save-exact", "--no-fund", "--no-audit",
		s.spec.pkg+"@"+s.spec.version)
	cmd.Dir = r.work
	path := filepath.Dir(npm)
	if s.node != "" && s.node != path {
		path += string(os.PathListSeparator) + s.node
	}
	cmd.Env = []string{
		"PATH=" + path + string(os.PathListSeparator) + "/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"LANG=C.UTF-8",
		"TMPDIR=" + r.tmp,
		"npm_config_cache=" + filepath.Join(s.cfg.Dir, "npm-cache"),
		"npm_config_update_notifier=false",
	}
	tail := &tailBuffer{max: 8 << 10}
	out := io.Writer(tail)
	if opts.Output != nil {
		out = io.MultiWriter(tail, opts.Output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	procGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return errs.E(op, errs.Busy, "npm did not finish installing %s@%s within %s; try again.", s.spec.pkg, s.spec.version, span(opts.Timeout))
		}
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return errs.Wrap(op, errs.Other, &Failure{Reason: NotInstalled, Detail: tail.lines(), sentence: "npm could not install " +
			s.spec.pkg + "@" + s.spec.version + " (exit status " + strconv.Itoa(code) + "); check the network and try again."}, "")
	}
	if got := s.Installed(); got != s.spec.version {
		return errs.E(op, errs.Other, "npm finished but %s is at version %q, not %s; install it again.", s.spec.pkg, got, s.spec.version)
	}
	return nil
}
