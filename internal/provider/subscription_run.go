package provider

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

// exitInfo is how a CLI run ended.
type exitInfo struct {
	code   int    // the exit status; -1 when a signal ended it
	stderr string // its last lines on stderr, secrets hidden, for a Failure's Detail
}

var (
	errStopped = errors.New("the reader stopped the CLI")
	errGrace   = errors.New("the CLI did not exit after its last event")
)

// run starts cmd and hands each non-empty stdout line to line until it says stop or fails. Timers
// bound the wait for the first line (FirstByte) and the silence between lines (Idle); ctx bounds the
// whole. Past a limit the CLI's whole process group is killed. stderr is kept (its tail) and never
// shown raw: it can carry tokens.
func (s *Subscription) run(ctx context.Context, cmd *exec.Cmd, line func([]byte) (bool, error)) (exitInfo, error) {
	const op = "provider.stream"
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return exitInfo{}, errs.Wrap(op, errs.Other, err, s.spec.name+" could not be started")
	}
	tail := &tailBuffer{max: 8 << 10}
	cmd.Stderr = tail
	cmd.WaitDelay = 2 * time.Second
	procGroup(cmd)
	if err := cmd.Start(); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrPermission) {
			return exitInfo{}, fail(op, s.notInstalled())
		}
		return exitInfo{}, errs.Wrap(op, errs.Other, err, s.spec.name+" could not be started")
	}

	var once sync.Once
	var cause error
	stop := func(c error) { once.Do(func() { cause = c; killGroup(cmd) }) }
	first := time.AfterFunc(s.cfg.FirstByte, func() { stop(errFirstByte) })
	idle := time.AfterFunc(time.Hour, func() { stop(errIdle) })
	idle.Stop()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop(ctx.Err())
		case <-done:
		}
	}()

	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var handled error
	ended := false
	for sc.Scan() {
		first.Stop()
		idle.Reset(s.cfg.Idle)
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		more, err := line(b)
		if err != nil {
			handled = err
			stop(errStopped)
			break
		}
		if !more {
			ended = true
			break
		}
	}
	scanErr := sc.Err()
	if scanErr != nil { // a line too long: the CLI would block writing the rest of it into a full pipe
		stop(errStopped)
	}
	first.Stop()
	idle.Stop()
	if ended { // the last event came: the CLI exits by itself, or is ended after a grace
		grace := time.AfterFunc(5*time.Second, func() { stop(errGrace) })
		_, _ = io.Copy(io.Discard, stdout) // draining only: the answer is complete
		grace.Stop()
	}
	_ = cmd.Wait() // the exit is read from ProcessState below, beside the stop's cause
	close(done)
	once.Do(func() {}) // waits for a stop in flight; none can come after
	ex := exitInfo{code: -1, stderr: tail.lines()}
	if cmd.ProcessState != nil {
		ex.code = cmd.ProcessState.ExitCode()
	}

	switch {
	case ctx.Err() != nil && errors.Is(cause, ctx.Err()):
		return ex, ctxFailure(op, ctx)
	case errors.Is(cause, errFirstByte):
		return ex, fail(op, transportFailure(s.spec.name, nil, cause, s.cfg.FirstByte))
	case errors.Is(cause, errIdle):
		return ex, fail(op, transportFailure(s.spec.name, nil, cause, s.cfg.Idle))
	case handled != nil:
		return ex, handled
	case scanErr != nil:
		return ex, fail(op, brokenFailure(s.spec.name, "a line of its output was too long"))
	}
	if errors.Is(cause, errGrace) { // it had answered; a CLI slow to exit is not a failed call
		ex.code = 0
	}
	return ex, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// lines is the last few lines, each with secrets hidden, joined by " | ".
func (t *tailBuffer) lines() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var keep []string
	for _, l := range strings.Split(strings.ToValidUTF8(string(t.buf), ""), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > 4 {
		keep = keep[len(keep)-4:]
	}
	return hideSecrets(strings.Join(keep, " | "))
}

var (
	bearer      = lazyregexp.New(`(?i)\bbearer\s+[^\s"',;]+`)
	secretAfter = lazyregexp.New(`(?i)\b(token|api[_-]?key|key|secret|password|passwd|authorization|cookie)(["']?\s*[:=]\s*["']?)[^\s"',;]+`)
	longToken   = lazyregexp.New(`[A-Za-z0-9_\-+/=.~%]{20,}`)
	email       = lazyregexp.New(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
)

// hideSecrets removes what could be a secret from a CLI's own words before they reach a Detail: a
// word after "Bearer", a value after token=/key:/password= and the like, any long run of token characters holding both letters and
// digits (keys, JWTs, session ids, paths with them), and e-mail addresses; then caps it at 300 bytes.
func hideSecrets(msg string) string {
	msg = bearer.ReplaceAllString(msg, "Bearer [hidden]")
	msg = secretAfter.ReplaceAllString(msg, "$1$2[hidden]")
	msg = email.ReplaceAllString(msg, "[email]")
	msg = longToken.ReplaceAllStringFunc(msg, func(w string) string {
		if strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			return "[hidden]"
		}
		return w
	})
	return scrub(msg, "")
}
