// Package sandbox owns running connector code: a child process of the box binary with rlimits, Landlock
// and no network of its own, JavaScript in goja, and the parent's egress proxy as its only way out
// (docs/CONNECTORS.md). It holds keys only in memory and writes nothing but the store folder it is given;
// it decides nothing about approval, which is the gate's.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/errs"
)

// Config is one connector's sandbox.
type Config struct {
	Bundle *connector.Bundle
	// Keys are the owner's keys by credential name, from the vault; a request that needs one not here
	// fails with a sentence saying where the owner adds it.
	Keys map[string]string
	// StoreDir is the folder ctx.store is kept in (store.json); empty: every call starts on a fresh store
	// that is kept nowhere.
	StoreDir string
	// BoxHosts are the box's own names (its public address's host): never reached, whatever egress says.
	BoxHosts []string
	// OnFetch hears of every request the code makes, sent or refused: the diary's line per host.
	OnFetch func(Fetch)
	// Exe is the binary run as the child; empty: this process's own executable. It must call IsChild and
	// ChildMain first thing in main (or TestMain).
	Exe string
	// Test replaces the network in tests; New refuses it outside a test binary.
	Test *TestNet
}

// Fetch is one request a connector made: the host, the status it answered, or why it was refused.
type Fetch struct {
	Host    string
	Status  int    // 0 when refused or not answered
	Refused string // why the proxy refused it; "" when sent
}

// Blocked is a host a call tried to reach and the proxy refused.
type Blocked struct {
	Host string `json:"host"`
	Why  string `json:"why"`
}

// Confinement is what held the child of a call.
type Confinement struct {
	Landlock   int  `json:"landlock"`   // the Landlock ABI in force, 0 when the kernel has none
	Namespaces bool `json:"namespaces"` // new user and network namespaces: no network interface at all
}

// Result is the outcome of one call. Value is set when the tool returned; the rest is set either way.
type Result struct {
	Value       json.RawMessage
	Tools       []string  // the tools the code exports
	Hosts       []string  // hosts reached, in order, each once
	Blocked     []Blocked // hosts refused, each once
	Fetches     int
	Log         string // the end of the child's stderr (ctx.log, errors), keys scrubbed, at most TailBytes
	Confinement Confinement
	Elapsed     time.Duration
}

// Runner runs one connector's calls, each in a fresh child process.
type Runner struct {
	cfg   Config
	exe   string
	proxy *proxy
	store *store
}

// New prepares a connector's sandbox; nothing starts until a call.
func New(cfg Config) (*Runner, error) {
	const op = "sandbox.new"
	if cfg.Bundle == nil {
		return nil, errs.E(op, errs.Invalid, "no connector bundle to run")
	}
	if cfg.Test != nil && !testing.Testing() {
		return nil, errs.E(op, errs.Refused, "the test network is for tests only")
	}
	exe := cfg.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, errs.Wrap(op, errs.Other, err, "the box cannot find its own binary to run the sandbox")
		}
	}
	st, err := openStore(cfg.StoreDir)
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "the connector's store cannot be read")
	}
	return &Runner{cfg: cfg, exe: exe, proxy: newProxy(cfg.Bundle, cfg.Keys, cfg.BoxHosts, cfg.Test), store: st}, nil
}

// Close lets go of idle connections.
func (r *Runner) Close() { r.proxy.client.CloseIdleConnections() }

// Call runs one tool with its arguments (checked against its inputSchema first) in a fresh child. The
// error is an *errs.Error: Invalid or NotFound for a bad call, Limited for a limit reached, Other when the
// tool threw or the sandbox could not run; its sentence says which.
func (r *Runner) Call(ctx context.Context, tool string, args json.RawMessage) (*Result, error) {
	if err := r.cfg.Bundle.CheckArgs(tool, args); err != nil {
		return &Result{}, err
	}
	data, dirty := r.store.snapshot()
	res, err := r.run(ctx, tool, args, r.store)
	if err != nil {
		r.store.restore(data, dirty)
	}
	if ferr := r.store.flush(); ferr != nil && err == nil {
		err = errs.Wrap("sandbox.call", errs.Other, ferr, "the connector's store could not be saved")
	}
	return res, err
}

// run is one child from start to end.
func (r *Runner) run(ctx context.Context, tool string, args json.RawMessage, st *store) (*Result, error) {
	const op = "sandbox.call"
	m := r.cfg.Bundle.Manifest
	began := time.Now()
	timeout := time.Duration(m.Limits.TimeoutS) * time.Second
	// The child stops itself at the time limit; the parent ends it for good a moment later.
	ctx, cancel := context.WithTimeout(ctx, timeout+750*time.Millisecond)
	defer cancel()

	dir, err := os.MkdirTemp("", "box-sandbox-")
	if err != nil {
		return &Result{}, errs.Wrap(op, errs.Other, err, "the sandbox could not make its empty working folder")
	}
	defer func() { _ = os.RemoveAll(dir) }() // an empty scratch folder under the system temp folder

	stderr := &tail{}
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	cmd, ns, err := start(func() *exec.Cmd {
		c := exec.Command(r.exe)
		c.Args = []string{childArg0}
		c.Env = []string{childEnv + "=1", "GOTRACEBACK=none", "GOMAXPROCS=1"}
		c.Dir = dir
		c.Stderr = stderr
		stdin, _ = c.StdinPipe()
		stdout, _ = c.StdoutPipe()
		return c
	})
	if err != nil {
		return &Result{}, errs.Wrap(op, errs.Other, err, "the sandbox could not start")
	}
	res := &Result{Confinement: Confinement{Namespaces: ns}}
	rec := &recorder{res: res, onFetch: r.cfg.OnFetch, scrub: r.proxy.scrub}
	killed := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Kill() // gone already is fine: Wait below reports how it ended
		case <-killed:
		}
	}()
	defer close(killed)

	done, failure := r.converse(ctx, stdin, stdout, &message{Op: "start", Script: r.cfg.Bundle.Script, Tool: tool, Args: args,
		TimeoutMs: timeout.Milliseconds(), MemoryMB: m.Limits.Memory}, st, rec)
	_ = stdin.Close() // the child reads nothing more; Wait reports how it ended
	if failure != nil {
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	res.Elapsed = time.Since(began)
	res.Log = lastBytes(r.proxy.scrub(stderr.Log()), TailBytes)
	switch {
	case failure != nil:
		return res, failure
	case done == nil:
		return res, r.death(ctx, cmd, waitErr, stderr.Head(), timeout)
	}
	res.Tools, res.Confinement.Landlock = done.Tools, done.Landlock
	if done.Stop != "" || done.Error != "" {
		return res, r.stopped(done, tool, cmd.ProcessState, res.Elapsed, timeout)
	}
	if len(done.Value) > maxFromChild/2 {
		return res, errs.E(op, errs.Limited, "the tool's result is %d KB; at most %d KB", len(done.Value)>>10, maxFromChild>>11)
	}
	res.Value = json.RawMessage(r.proxy.scrub(string(done.Value)))
	if !json.Valid(res.Value) {
		return res, errs.E(op, errs.Other, "the tool's result is not JSON")
	}
	return res, nil
}

// converse sends the start message and answers the child until it is done. A failure is a reason to end
// the child now (a limit, a broken message); a child that just stops gives neither.
func (r *Runner) converse(ctx context.Context, in io.Writer, out io.Reader, startMsg *message, st *store, rec *recorder) (*message, error) {
	const op = "sandbox.call"
	if err := writeFrame(in, startMsg); err != nil {
		return nil, nil
	}
	for {
		m, err := readFrame(out, maxFromChild)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) {
				return nil, nil
			}
			var big *tooLarge
			if errors.As(err, &big) {
				return nil, errs.E(op, errs.Limited, "the tool sent more than %d MB at once (a result or a request); the call was ended", maxFromChild>>20)
			}
			return nil, errs.E(op, errs.Other, "the connector's process sent %v", err)
		}
		var reply *message
		switch m.Op {
		case "done":
			return m, nil
		case "fetch":
			if m.Req == nil {
				return nil, errs.E(op, errs.Other, "the connector's process sent a fetch without a request")
			}
			if rec.res.Fetches++; rec.res.Fetches > MaxFetches {
				return nil, errs.E(op, errs.Limited, "the tool made more than %d fetches in one call; the call was ended", MaxFetches)
			}
			res, err := r.proxy.fetch(ctx, m.Req, r.reads(startMsg.Tool))
			rec.fetched(m.Req.URL, res, err)
			if err != nil { // scrubbed as a response is: a refused redirect's address can echo a key
				reply = &message{Op: "reply", Error: r.proxy.scrub(err.Error())}
			} else {
				reply = &message{Op: "reply", Res: res}
			}
		case "store":
			reply = st.do(m)
		default:
			return nil, errs.E(op, errs.Other, "the connector's process sent %q", clip(m.Op))
		}
		if err := writeFrame(in, reply); err != nil {
			return nil, nil
		}
	}
}

// stopped explains a tool the child ended without a value. Only the parent's own evidence says a limit
// was reached: its clock for the time limit, the kernel's count of the child's memory for the memory
// limit. What the connector's code threw is its own words: quoted and labelled as such, never a
// sentence of the box's, and never a reason to call the failure a limit (docs/CONNECTORS.md, "The sandbox").
func (r *Runner) stopped(done *message, tool string, ps *os.ProcessState, elapsed, timeout time.Duration) error {
	const op = "sandbox.call"
	m := r.cfg.Bundle.Manifest
	switch done.Stop {
	case "":
		return errs.E(op, errs.Other, "the tool failed; the connector's code said (its words, not the box's): %q", r.proxy.scrub(done.Error))
	case stopTime:
		if elapsed >= timeout {
			return errs.E(op, errs.Limited, "the tool ran past its %s time limit", timeout)
		}
	case stopMemory:
		if maxRSS(ps) >= int64(m.Limits.Memory)<<20 {
			return errs.E(op, errs.Limited, "the tool used more than its %d MB of memory", m.Limits.Memory)
		}
	case stopUnsettled:
		return errs.E(op, errs.Other, "the tool never finished: it waits on a promise that nothing resolves (there are no timers in the sandbox)")
	case stopNoTools:
		return errs.E(op, errs.Other, "index.mjs exports no tools object")
	case stopNoTool:
		return errs.E(op, errs.Other, "index.mjs exports no tool %s", tool)
	}
	return errs.E(op, errs.Other, "the connector's process said it stopped at a limit the box did not see reached; the call was ended")
}

// reads reports whether a call of tool is held to reading: every tool but one declared effect write
// (docs/CONNECTORS.md, "The egress proxy"). A run with no tool (the exports check) reads.
func (r *Runner) reads(tool string) bool {
	t := r.cfg.Bundle.Manifest.Tool(tool)
	return t == nil || t.Effect != connector.Write
}

// death explains a child that ended without its done message; head is the start of its stderr.
func (r *Runner) death(ctx context.Context, cmd *exec.Cmd, waitErr error, head string, timeout time.Duration) error {
	const op = "sandbox.call"
	m := r.cfg.Bundle.Manifest
	ps := cmd.ProcessState
	switch {
	case ps != nil && !ps.Success() && diedOfMemory(head):
		return errs.E(op, errs.Limited, "the tool used more than its %d MB of memory", m.Limits.Memory)
	case ctx.Err() != nil:
		return errs.E(op, errs.Limited, "the tool ran past its %s time limit", timeout)
	case ps != nil && killedBySignal(ps) && ps.SystemTime()+ps.UserTime() >= timeout:
		return errs.E(op, errs.Limited, "the tool used more than its %s of processor time", timeout)
	case ps != nil && !ps.Success():
		return errs.E(op, errs.Other, "the connector's process ended without an answer (%s)", ps)
	}
	return errs.Wrap(op, errs.Other, waitErr, "the connector's process ended without an answer")
}

// recorder gathers the hosts of a call and tells OnFetch of each request.
type recorder struct {
	mu      sync.Mutex
	res     *Result
	onFetch func(Fetch)
	scrub   func(string) string // the proxy's: a host or reason can carry a key the connector echoed
}

func (rc *recorder) fetched(rawURL string, res *fetchResponse, err error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	f := Fetch{}
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		f.Host, f.Refused = rc.scrub(ref.host), rc.scrub(ref.why)
		if f.Host == "" { // never the address itself: the connector's text, which can carry anything
			f.Host = "an address that is not a web address"
		}
		if !slices.ContainsFunc(rc.res.Blocked, func(b Blocked) bool { return b.Host == f.Host }) {
			rc.res.Blocked = append(rc.res.Blocked, Blocked{Host: f.Host, Why: f.Refused})
		}
	case res != nil:
		f.Host, f.Status = hostOf(res.URL), res.Status
	default:
		f.Host = hostOf(rawURL)
	}
	if f.Refused == "" && f.Host != "" && !slices.Contains(rc.res.Hosts, f.Host) {
		rc.res.Hosts = append(rc.res.Hosts, f.Host)
	}
	if rc.onFetch != nil {
		rc.onFetch(f)
	}
}

// Probe reports whether connectors can run on this machine, by running an empty one; the answer says
// what confines the child here. exe is as Config.Exe.
func Probe(ctx context.Context, exe string) (Confinement, error) {
	if !canRun {
		return Confinement{}, errs.E("sandbox.probe", errs.Refused, "connectors run only on Linux")
	}
	b, rep := connector.Validate([]byte(`{"name": "probe", "what": "probe", "tools": [{"name": "t", "description": "t", "effect": "write", "inputSchema": {"type": "object"}}]}`),
		[]byte(`{"index.mjs": "export const tools = { t: async () => 1 };"}`), connector.Options{})
	if !rep.OK {
		return Confinement{}, fmt.Errorf("the probe connector does not validate: %v", rep.Problems)
	}
	r, err := New(Config{Bundle: b, Exe: exe})
	if err != nil {
		return Confinement{}, err
	}
	res, err := r.Call(ctx, "t", nil)
	if err != nil {
		return Confinement{}, err
	}
	return res.Confinement, nil
}
