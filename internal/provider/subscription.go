package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// CLI is a command-line program, signed in to the owner's own subscription, that the box can think
// through (docs/BRAIN.md, "Subscriptions").
type CLI string

const (
	ClaudeCode CLI = "claude-code" // Claude Code (`claude -p`) on the owner's Claude subscription
	Codex      CLI = "codex"       // Codex CLI (`codex exec`) on the owner's ChatGPT subscription
)

// The npm packages and the versions the box runs, pinned: the event formats this package reads
// were checked against exactly these (docs/BRAIN.md).
const (
	ClaudeCodePackage = "@anthropic-ai/claude-code"
	ClaudeCodeVersion = "2.1.332"
	CodexPackage      = "@openai/codex"
	CodexVersion      = "0.171.0"
)

// SubscriptionConfig says which CLI to run and where its files live.
type SubscriptionConfig struct {
	CLI CLI
	// Dir is the subscription's own folder, outside the box tree: the composition root passes
	// <vault folder>/subscription, which the vault has checked lies outside. It holds the npm install,
	// each CLI's HOME (where the owner signs in) and one fresh folder per call.
	Dir string
	// FirstByte bounds the wait for the CLI's first output line; 0 means 120 s (the CLI starts, then
	// the model thinks).
	FirstByte time.Duration
	// Idle bounds the silence between two output lines; 0 means 90 s.
	Idle time.Duration
	// Now is the clock for usage-limit reset times; nil means time.Now.
	Now func() time.Time
}

// Subscription thinks through one CLI. It implements Provider; a call runs the CLI once, with no
// built-in tools, its own HOME, a fresh empty working folder and an explicit minimal environment.
type Subscription struct {
	cfg  SubscriptionConfig
	spec cliSpec
	node string // the folder of the node binary, for Codex's npm launcher; "" when not found
}

// cliSpec is what differs between the two CLIs.
type cliSpec struct {
	name    string // as the owner knows it
	bin     string // the command npm installs under node_modules/.bin
	pkg     string
	version string
	account string // what the owner signs in with, for sentences
	// stream is the argument list of one thinking call; sys is the system prompt file, "" when the
	// request has none (the CLI's own then applies).
	stream func(sys, work string, req Request) []string
	env    func(req Request) []string // variables beyond PATH, HOME, LANG and TMPDIR
	parser func(s *Subscription, req Request, emit func(Delta)) cliStream
}

// cliStream reads one call's output lines and makes the reply.
type cliStream interface {
	line(b []byte) (more bool, err error)
	finish(ex exitInfo, err error) (Reply, error)
}

// cliLines is what both CLIs' streams share: the model, the text through the tool scanner, and how a
// line that cannot be read ends the run.
type cliLines struct {
	sub   *Subscription
	model string
	text  *textReply
	got   bool // any of the model's text arrived
}

func newCLILines(s *Subscription, req Request, emit func(Delta)) cliLines {
	return cliLines{sub: s, model: req.Model, text: newTextReply(s.spec.name, emit)}
}

func (c *cliLines) unreadable(what string) (bool, error) {
	return false, fail("provider.stream", brokenFailure(c.sub.spec.name, what))
}

// end closes the text and returns the reply so far, with what ends the run early: its own error,
// or too many tool calls.
func (c *cliLines) end(err error) (Reply, error) {
	c.text.end()
	r := c.text.reply
	r.Model = c.model
	if err == nil && c.text.tooMany {
		err = fail("provider.stream", brokenFailure(c.sub.spec.name, "too many tool calls"))
	}
	return r, err
}

// NewSubscription returns the provider for cfg. It checks the folder is absolute, and starts nothing.
func NewSubscription(cfg SubscriptionConfig) (*Subscription, error) {
	const op = "provider.subscription"
	if cfg.FirstByte == 0 {
		cfg.FirstByte = 120 * time.Second
	}
	if cfg.Idle == 0 {
		cfg.Idle = 90 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if !filepath.IsAbs(cfg.Dir) {
		return nil, errs.E(op, errs.Invalid, "The subscription folder %q must be an absolute path outside the box.", cfg.Dir)
	}
	s := &Subscription{cfg: cfg}
	switch cfg.CLI {
	case ClaudeCode:
		s.spec = claudeSpec
	case Codex:
		s.spec = codexSpec
	default:
		return nil, errs.E(op, errs.Invalid, "Unknown subscription %q: use claude-code or codex.", cfg.CLI)
	}
	if node, err := exec.LookPath("node"); err == nil {
		s.node = filepath.Dir(node)
	}
	return s, nil
}

// Name is the CLI as the owner knows it: "Claude Code" or "Codex".
func (s *Subscription) Name() string { return s.spec.name }

// Package and Version are the npm package and the pinned version this CLI runs at.
func (s *Subscription) Package() string { return s.spec.pkg }
func (s *Subscription) Version() string { return s.spec.version }

// Home is the CLI's own HOME, where the owner signs in (docs/BRAIN.md, "Signing in").
func (s *Subscription) Home() string { return filepath.Join(s.cfg.Dir, "home", string(s.cfg.CLI)) }

func (s *Subscription) prefix() string { return filepath.Join(s.cfg.Dir, "npm") }
func (s *Subscription) bin() string {
	return filepath.Join(s.prefix(), "node_modules", ".bin", s.spec.bin)
}

// Installed returns the version of the CLI installed in the subscription folder, "" when none is.
func (s *Subscription) Installed() string {
	data, err := os.ReadFile(filepath.Join(s.prefix(), "node_modules", filepath.FromSlash(s.spec.pkg), "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return ""
	}
	return pkg.Version
}

// environ is the child's whole environment, built here and never taken from the box's own: the
// parent may hold keys (an ANTHROPIC_API_KEY would turn a subscription into a metered API bill, an
// OPENAI_API_KEY likewise), proxies with passwords, or tokens of other tools.
func (s *Subscription) environ(tmp string, extra []string) []string {
	path := []string{filepath.Dir(s.bin())}
	if s.node != "" {
		path = append(path, s.node)
	}
	path = append(path, "/usr/local/bin", "/usr/bin", "/bin")
	env := []string{
		"PATH=" + strings.Join(path, string(os.PathListSeparator)),
		"HOME=" + s.Home(),
		"LANG=C.UTF-8",
		"TMPDIR=" + tmp,
	}
	return append(env, extra...)
}

// runDir is one call's own folder: an empty working folder, a temporary folder and the system prompt.
type runDir struct{ root, work, tmp, system string }

func (s *Subscription) newRun() (runDir, error) {
	const op = "provider.subscription"
	if err := s.privateDirs(s.cfg.Dir, s.Home(), filepath.Join(s.cfg.Dir, "runs")); err != nil {
		return runDir{}, err
	}
	root, err := os.MkdirTemp(filepath.Join(s.cfg.Dir, "runs"), "call-")
	if err != nil {
		return runDir{}, errs.Wrap(op, errs.Other, err, "A folder for the call could not be made")
	}
	r := runDir{root: root, work: filepath.Join(root, "work"), tmp: filepath.Join(root, "tmp"), system: filepath.Join(root, "system.md")}
	for _, d := range []string{r.work, r.tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = os.RemoveAll(root) // the call fails with the Mkdir error either way
			return runDir{}, errs.Wrap(op, errs.Other, err, "A folder for the call could not be made")
		}
	}
	return r, nil
}

func (r runDir) remove() { _ = os.RemoveAll(r.root) } // best effort after the call; the folder is private

// privateDirs makes each folder, or closes an existing one, to its owner alone (0700): a CLI's HOME
// holds its sign-in tokens.
func (s *Subscription) privateDirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return errs.Wrap("provider.subscription", errs.Other, err, "The subscription folder could not be made")
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return errs.Wrap("provider.subscription", errs.Other, err, "The subscription folder could not be closed to other users")
		}
	}
	return nil
}

// command is one run of the CLI with args in the run's folders.
func (s *Subscription) command(r runDir, args []string, extraEnv []string, stdin string) *exec.Cmd {
	cmd := exec.Command(s.bin(), args...)
	cmd.Dir = r.work
	cmd.Env = s.environ(r.tmp, extraEnv)
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

// Stream runs the CLI once: the system prompt (with the tools section of the text protocol) in a
// file, the conversation on stdin (never in the arguments, which other users of the machine can
// list), and the reply read from its JSON-lines output as it streams.
func (s *Subscription) Stream(ctx context.Context, req Request, emit func(Delta)) (Reply, error) {
	const op = "provider.stream"
	if _, err := os.Stat(s.bin()); err != nil {
		return Reply{Model: req.Model}, fail(op, s.notInstalled())
	}
	r, err := s.newRun()
	if err != nil {
		return Reply{Model: req.Model}, err
	}
	defer r.remove()
	sys := ""
	if system := strings.TrimSpace(strings.TrimSpace(req.System) + toolsSection(req.Tools)); system != "" {
		if err := os.WriteFile(r.system, []byte(system), 0o600); err != nil {
			return Reply{Model: req.Model}, errs.Wrap(op, errs.Other, err, "The system prompt could not be written for "+s.spec.name)
		}
		sys = r.system
	}
	cmd := s.command(r, s.spec.stream(sys, r.work, req), s.spec.env(req), transcript(req.Messages, len(req.Tools) > 0))
	st := s.spec.parser(s, req, emit)
	ex, err := s.run(ctx, cmd, st.line)
	return st.finish(ex, err)
}

// CheckKey asks the CLI whether the owner is signed in: nil when they are.
func (s *Subscription) CheckKey(ctx context.Context) error {
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	if !st.SignedIn {
		return fail("provider.check", s.signedOut(""))
	}
	return nil
}

// SignIn is what the CLI says about the owner's sign-in.
type SignIn struct {
	SignedIn bool
	Method   string // how: "claude.ai", "ChatGPT", "API key" (a key is billed per token, not the plan)
	Plan     string // the subscription when the CLI names it ("pro", "max"), else ""
}

// Status runs the CLI's own sign-in check: `claude auth status --json`, `codex login status`.
func (s *Subscription) Status(ctx context.Context) (SignIn, error) {
	const op = "provider.status"
	if _, err := os.Stat(s.bin()); err != nil {
		return SignIn{}, fail(op, s.notInstalled())
	}
	r, err := s.newRun()
	if err != nil {
		return SignIn{}, err
	}
	defer r.remove()
	var out strings.Builder
	cmd := s.command(r, s.statusArgs(), s.spec.env(Request{}), "")
	ex, err := s.run(ctx, cmd, func(b []byte) (bool, error) {
		if out.Len() < 64<<10 {
			out.Write(b)
			out.WriteByte('\n')
		}
		return true, nil
	})
	if err != nil {
		return SignIn{}, err
	}
	if ex.code != 0 && ex.code != 1 {
		return SignIn{}, fail(op, s.crashed(ex))
	}
	if s.cfg.CLI == ClaudeCode {
		return parseClaudeStatus([]byte(out.String())), nil
	}
	return parseCodexStatus(out.String()+"\n"+ex.stderr, ex.code), nil
}

func (s *Subscription) statusArgs() []string {
	if s.cfg.CLI == ClaudeCode {
		return []string{"auth", "status", "--json"}
	}
	return append([]string{"login", "status"}, codexConfig...)
}

// SignInCommand is the CLI's own sign-in, in its HOME and with the same minimal environment, for
// the owner to run in a terminal: it shows a link and a code, the owner opens the link anywhere and
// types the code. Its folders are made; the caller runs it with the terminal attached.
func (s *Subscription) SignInCommand(ctx context.Context) (*exec.Cmd, error) {
	const op = "provider.signin"
	if _, err := os.Stat(s.bin()); err != nil {
		return nil, fail(op, s.notInstalled())
	}
	work, tmp := filepath.Join(s.cfg.Dir, "signin"), filepath.Join(s.cfg.Dir, "signin", "tmp")
	if err := s.privateDirs(s.cfg.Dir, s.Home(), work, tmp); err != nil {
		return nil, err
	}
	args := []string{"auth", "login", "--claudeai"}
	if s.cfg.CLI == Codex {
		args = append([]string{"login", "--device-auth"}, codexConfig...)
	}
	cmd := exec.CommandContext(ctx, s.bin(), args...)
	cmd.Dir = work
	cmd.Env = s.environ(tmp, s.spec.env(Request{}))
	return cmd, nil
}

// Models lists the models the CLI offers this account: Claude Code's answer to the initialize
// request of its stream-json control protocol, Codex's `debug models` catalog.
func (s *Subscription) Models(ctx context.Context) ([]Model, error) {
	const op = "provider.models"
	if _, err := os.Stat(s.bin()); err != nil {
		return nil, fail(op, s.notInstalled())
	}
	r, err := s.newRun()
	if err != nil {
		return nil, err
	}
	defer r.remove()
	if s.cfg.CLI == ClaudeCode {
		return s.claudeModels(ctx, r)
	}
	return s.codexModels(ctx, r)
}

// The failures every CLI shares.

func (s *Subscription) notInstalled() *Failure {
	return &Failure{Reason: NotInstalled, sentence: fmt.Sprintf("%s is not installed for the box yet: install it (%s %s) in Settings → Brain.", s.spec.name, s.spec.pkg, s.spec.version)}
}

func (s *Subscription) signedOut(detail string) *Failure {
	return &Failure{Reason: SignedOut, Detail: detail, sentence: fmt.Sprintf("%s is not signed in to %s (or its sign-in expired): sign in again in Settings → Brain.", s.spec.name, s.spec.account)}
}

func (s *Subscription) crashed(ex exitInfo) *Failure {
	if ex.code == 126 || ex.code == 127 {
		return &Failure{Reason: NotInstalled, Detail: ex.stderr, sentence: fmt.Sprintf("%s could not start (exit status %d): install it again in Settings → Brain.", s.spec.name, ex.code)}
	}
	what := fmt.Sprintf("exit status %d", ex.code)
	if ex.code < 0 {
		what = "killed by a signal"
	}
	return &Failure{Reason: BrokenStream, Detail: ex.stderr, sentence: fmt.Sprintf("%s stopped unexpectedly (%s); try again.", s.spec.name, what)}
}

func (s *Subscription) down(detail string) *Failure {
	return &Failure{Reason: Down, Detail: detail, sentence: s.spec.name + " failed while answering; try again in a few minutes."}
}

func (s *Subscription) limited(detail string, retry time.Duration, when string) *Failure {
	f := &Failure{Reason: RateLimited, Detail: detail, RetryAfter: retry}
	switch {
	case retry > 0:
		f.sentence = fmt.Sprintf("The usage limit of %s is reached; %s resumes %s.", s.spec.account, s.spec.name, wait(retry))
	case when != "":
		f.sentence = fmt.Sprintf("The usage limit of %s is reached; try again %s.", s.spec.account, when)
	default:
		f.sentence = fmt.Sprintf("The usage limit of %s is reached; try again later, or pick another brain in Settings → Brain.", s.spec.account)
	}
	return f
}

var _ Provider = (*Subscription)(nil)
