// Package backup owns the box's off-machine copies (docs/BACKUP.md): adding and removing backup
// remotes with their tokens sealed in the vault, how far each is behind, pushing the box's branch to
// every one with a backoff after failures that can pass, and what a failure tells the owner. The git
// side (remotes, push, clone, askpass) is internal/git's; scheduling the pushes is the job runner's.
package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/vault"
)

// Config is what the backups need of the process.
type Config struct {
	Repo    *git.Repo
	Vault   func() (*vault.Vault, error) // opened on first use
	Askpass string                       // the box binary, for git's askpass (os.Executable)
	Now     func() time.Time
	// HealthFile keeps what pushes met for every process of the box (.box/backups.json, never committed):
	// a failure box serve met shows in box backup status, and box backup now's success resumes box
	// serve's pushes. "": this process's memory only.
	HealthFile string
	// HasVault reports whether the vault exists, so a box without one never makes its folder to find no
	// token; nil: it is opened.
	HasVault func() bool
	// PushTimeout bounds one push, so a remote that trickles or hangs cannot hold the job runner (and
	// box backup now) for ever; 0 is DefaultPushTimeout. Stall is how long a remote may send nothing
	// before git gives up (git.Auth.Stall); 0 is git.DefaultStall.
	PushTimeout time.Duration
	Stall       time.Duration
}

// DefaultPushTimeout is how long one push may take: a box is text, and a first push of years of it
// over a slow line still fits; a push that stalls gives up sooner (git.DefaultStall).
const DefaultPushTimeout = 10 * time.Minute

// Backups are the box's backup remotes. Safe for concurrent use.
type Backups struct {
	cfg Config

	mu  sync.Mutex
	mem map[string]health // by remote name, when there is no HealthFile
}

// health is what the box knows of a remote's recent pushes.
type health struct {
	Failures int       `json:"failures"`
	LastErr  string    `json:"lastErr"`
	Stopped  bool      `json:"stopped,omitempty"` // a failure that waits for the owner (stops)
	NotUntil time.Time `json:"notUntil"`          // no retry before this
}

// New is the backups of one box.
func New(cfg Config) *Backups {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PushTimeout <= 0 {
		cfg.PushTimeout = DefaultPushTimeout
	}
	return &Backups{cfg: cfg, mem: map[string]health{}}
}

// load reads the health of every remote; b.mu is held. A health file that does not parse is the box's
// own runtime file gone bad: it is read as empty (every remote is tried at the next round).
func (b *Backups) load() (map[string]health, error) {
	if b.cfg.HealthFile == "" {
		return b.mem, nil
	}
	data, err := os.ReadFile(b.cfg.HealthFile)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]health{}, nil
	}
	if err != nil {
		return nil, errs.Wrap("backup.health", errs.Other, err, "The backups' state ("+b.cfg.HealthFile+") cannot be read")
	}
	m := map[string]health{}
	if json.Unmarshal(data, &m) != nil {
		return map[string]health{}, nil
	}
	return m, nil
}

// save writes the health of every remote back; b.mu is held.
func (b *Backups) save(m map[string]health) error {
	if b.cfg.HealthFile == "" {
		b.mem = m
		return nil
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = atomicfile.WriteFile(b.cfg.HealthFile, append(data, '\n'), 0o600)
	}
	if err != nil {
		return errs.Wrap("backup.health", errs.Other, err, "The backups' state ("+b.cfg.HealthFile+") cannot be written")
	}
	return nil
}

// update changes one remote's health (nil: forgets it) from what is on file now.
func (b *Backups) update(name string, f func(h *health) bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, err := b.load()
	if err != nil {
		return err
	}
	h := m[name]
	if f(&h) {
		m[name] = h
	} else {
		delete(m, name)
	}
	return b.save(m)
}

// forget drops what is kept of remotes no longer listed (a git remote remove, or a Remove that failed
// after the remote went): a retry time of theirs would re-arm the backup job for nothing, at once and
// again when it is in the past. b.mu is held; m is saved when anything went. The remotes are listed
// here, after m was read: another process that added a remote and kept its health did so before this
// listing, so a list read earlier never drops it.
func (b *Backups) forget(ctx context.Context, m map[string]health) error {
	rs, err := b.cfg.Repo.Remotes(ctx)
	if err != nil {
		return err
	}
	n := len(m)
	for name := range m {
		if !slices.ContainsFunc(rs, func(r git.Remote) bool { return r.Name == name }) {
			delete(m, name)
		}
	}
	if len(m) == n {
		return nil
	}
	return b.save(m)
}

// vault opens the vault, or says there is none (nil, nil) when it was never made.
func (b *Backups) vault() (*vault.Vault, error) {
	if b.cfg.HasVault != nil && !b.cfg.HasVault() {
		return nil, nil
	}
	return b.cfg.Vault()
}

// TokenName is the vault name of a backup's token.
func TokenName(remote string) string { return "backup/" + remote }

// SealToken is the vault value for a token given for url: the two sealed together, so a remote whose
// URL is changed in .git/config never gets the token (docs/BACKUP.md).
func SealToken(url, token string) string { return vault.Bind(url, token) }

// Add records a backup remote; a token, when given, is sealed in the vault under the remote's name.
// Nothing is written when either step is refused.
func (b *Backups) Add(ctx context.Context, name, url, token string) error {
	if err := git.CheckName(name); err != nil {
		return err
	}
	if err := git.CheckURL(url); err != nil {
		return err
	}
	var v *vault.Vault
	if token != "" {
		var err error
		if v, err = b.cfg.Vault(); err != nil {
			return err
		}
	}
	if err := b.cfg.Repo.AddRemote(ctx, name, url); err != nil {
		return err // a name taken or a URL refused: nothing is written, no token kept
	}
	if token != "" {
		if err := v.Put(TokenName(name), SealToken(url, token)); err != nil {
			return errors.Join(err, b.cfg.Repo.RemoveRemote(ctx, name)) // no remote without its token
		}
	}
	return nil
}

// Remove forgets a backup remote and its token; the remote itself is left as it is.
func (b *Backups) Remove(ctx context.Context, name string) error {
	if err := b.cfg.Repo.RemoveRemote(ctx, name); err != nil {
		return err
	}
	v, err := b.vault()
	if err != nil {
		return errs.Wrap("backup.remove", errs.Other, err, "The backup "+name+" is removed, but its token could not be deleted from the vault, which does not open")
	}
	if v != nil {
		if err := v.Delete(TokenName(name)); err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
	}
	return b.update(name, func(*health) bool { return false })
}

// Status is one remote as box backup status shows it.
type Status struct {
	git.Remote
	Failing   bool      `json:"failing,omitempty"`  // the last push failed
	Error     string    `json:"error,omitempty"`    // the last push's failure, one sentence
	NextRetry time.Time `json:"nextRetry,omitzero"` // when it is tried again; zero: at the next commit
	Stopped   bool      `json:"stopped,omitempty"`  // not retried until the owner acts (credentials, a remote that moved)
}

// Status lists the backups, each with how far behind it is and what the process knows of its pushes.
func (b *Backups) Status(ctx context.Context) ([]Status, error) {
	rs, err := b.cfg.Repo.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(rs))
	b.mu.Lock()
	defer b.mu.Unlock()
	m, err := b.load()
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		r.URL = git.ShownURL(r.URL)
		s := Status{Remote: r}
		if h := m[r.Name]; h.Failures > 0 {
			s.Failing, s.Error, s.Stopped = true, h.LastErr, h.Stopped
			if !h.Stopped {
				s.NextRetry = h.NotUntil
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Pushed is one remote's outcome in a round of pushes.
type Pushed struct {
	Remote    string `json:"remote"`
	Commit    string `json:"commit,omitempty"`
	Unchanged bool   `json:"unchanged,omitempty"`
	Skipped   string `json:"skipped,omitempty"` // why it was not tried now (backing off, stopped)
	Error     string `json:"error,omitempty"`
	// New is true for a failure that is not the same as the remote's last one, and for the first success
	// after failures: what is worth a record, a diary line and a line on Today.
	New bool `json:"new,omitempty"`
}

// Round is what one round of pushes did.
type Round struct {
	Pushed []Pushed `json:"pushed"`
}

// Failed counts the remotes whose push failed in the round.
func (r Round) Failed() int {
	n := 0
	for _, p := range r.Pushed {
		if p.Error != "" {
			n++
		}
	}
	return n
}

// Worth reports whether the round has news for the owner: a new failure, or a recovery.
func (r Round) Worth() bool {
	for _, p := range r.Pushed {
		if p.New {
			return true
		}
	}
	return false
}

// PushAll pushes the box's branch to every backup that is not backing off (all of them when asked:
// box backup now), force after an erase. Pushes take no box lock: a write is never held up by one.
func (b *Backups) PushAll(ctx context.Context, force, asked bool) (Round, error) {
	rs, err := b.cfg.Repo.Remotes(ctx)
	if err != nil {
		return Round{}, err
	}
	b.mu.Lock()
	m, err := b.load()
	if err == nil {
		err = b.forget(ctx, m)
	}
	b.mu.Unlock()
	if err != nil {
		return Round{}, err
	}
	round := Round{Pushed: []Pushed{}}
	for _, r := range rs {
		now := b.cfg.Now()
		b.mu.Lock()
		m, err := b.load()
		h := m[r.Name]
		why := ""
		switch {
		case err != nil || h.Failures == 0 || asked || force:
		case h.Stopped:
			why = "stopped until the owner acts: " + h.LastErr
		case now.Before(h.NotUntil):
			why = fmt.Sprintf("backing off after %d failed pushes until %s", h.Failures, h.NotUntil.Format(time.RFC3339))
		}
		b.mu.Unlock()
		if err != nil {
			return round, err
		}
		if why != "" {
			round.Pushed = append(round.Pushed, Pushed{Remote: r.Name, Skipped: why})
			continue
		}
		if !force && r.Behind == 0 && r.Pushed != "" && h.Failures == 0 {
			round.Pushed = append(round.Pushed, Pushed{Remote: r.Name, Commit: r.Pushed, Unchanged: true})
			continue
		}
		res, err := b.push(ctx, r.Name, force)
		if err != nil && ctx.Err() != nil {
			// Stopped by the caller (box serve stopping): no failure of the remote, and no other remote is
			// tried with the ended context.
			return round, ctx.Err()
		}
		var p Pushed
		if uerr := b.update(r.Name, func(h *health) bool {
			if err == nil {
				p = Pushed{Remote: r.Name, Commit: res.Commit, Unchanged: res.Unchanged, New: h.Failures > 0}
				return false
			}
			msg := errs.Sentence(err)
			if msg == "" {
				msg = err.Error()
			}
			p = Pushed{Remote: r.Name, Error: msg, New: reason(msg) != reason(h.LastErr)}
			h.Failures++
			h.LastErr, h.Stopped = msg, stops(errs.KindOf(err))
			// From the end of the attempt: a push that took minutes to fail is not tried again at once.
			h.NotUntil = b.cfg.Now().Add(Backoff(h.Failures))
			return true
		}); uerr != nil {
			return round, uerr
		}
		round.Pushed = append(round.Pushed, p)
	}
	return round, nil
}

// push makes one push to name within PushTimeout.
func (b *Backups) push(ctx context.Context, name string, force bool) (git.PushResult, error) {
	auth, err := b.auth(name)
	if err != nil {
		return git.PushResult{}, err
	}
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PushTimeout)
	defer cancel()
	res, err := b.cfg.Repo.Push(pctx, name, force, auth)
	if err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return res, errs.Wrap("backup.push", errs.Other, err, fmt.Sprintf("The push to %s did not finish within %s, so it was stopped; it is tried again later", name, b.cfg.PushTimeout))
	}
	return res, err
}

// reason is a failure's sentence without what changes from one try of the same failure to the next:
// timings (curl's "after 0 ms", "after 30001 milliseconds", a time the server gives, a Go duration),
// byte counts, counts of tries ("3 out of 5") and IP addresses (a name resolves to another address of
// the same server from one try to the next). Two failures with the same reason are one outage, news
// once and not at every retry; every other number stays, so HTTP 502 then 503, or port 22 then 2222
// (also after an address: 192.0.2.10:22, [::1]:2222), are two failures.
func reason(msg string) string {
	msg = ipAddr.ReplaceAllStringFunc(msg, blankIP)
	return noise.ReplaceAllString(msg, "#")
}

// blankIP is "#" in place of s when s is an IP address, keeping a single colon either side that the
// match took from the sentence ("host:2001:db8::1: refused"); anything else (a time of day, ":2222:"
// after an address) is left as it is.
func blankIP(s string) string {
	lead, addr, trail := "", s, ""
	if strings.HasPrefix(addr, ":") && !strings.HasPrefix(addr, "::") {
		lead, addr = ":", addr[1:]
	}
	if strings.HasSuffix(addr, ":") && !strings.HasSuffix(addr, "::") {
		addr, trail = addr[:len(addr)-1], ":"
	}
	if _, err := netip.ParseAddr(strings.Trim(addr, "[]")); err != nil {
		return s
	}
	return lead + "#" + trail
}

// ipAddr is what may be an IP address, which reason checks: IPv4, bracketed IPv6 (with a zone) or
// bare IPv6. A port after it is not part of the match, so it stays.
var ipAddr = lazyregexp.New(`\[[0-9A-Fa-f:.]+(?:%[\w.-]+)?\]|\b(?:\d{1,3}\.){3}\d{1,3}\b|(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f.]*(?:%[\w.-]+)?`)

// noise is a count of tries ("3 out of 5"), a Go duration ("2m0s", "1.5s") or a number with a unit of
// time or size ("after 0 ms", "30 minutes", "512 bytes").
var noise = lazyregexp.New(`(?i)\b(?:\d+ out of \d+|(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|h|m|s))+|\d+(?:[.,]\d+)?\s?(?:milliseconds?|secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|bytes?|[kmg]i?b|ns|µs|us|ms|h|m|s))\b`)

// auth is how a push to name proves itself: its token from the vault, when it has one (ssh remotes use
// the owner's agent and need none).
func (b *Backups) auth(name string) (git.Auth, error) {
	a := git.Auth{Askpass: b.cfg.Askpass, Stall: b.cfg.Stall}
	v, err := b.vault()
	if err != nil {
		return a, errs.Wrap("backup.auth", errs.Other, err, "The vault that holds the backups' tokens does not open, so nothing was pushed")
	}
	if v == nil {
		return a, nil // no vault: no token to give; a remote that needs one says so
	}
	sec, err := v.Get(TokenName(name))
	if errs.Is(err, errs.NotFound) {
		return a, nil
	}
	if err != nil {
		return a, err
	}
	a.URL, a.Token, _ = vault.Unbind(sec.Reveal()) // a token kept without its address goes nowhere (git refuses it)
	return a, nil
}

// stops reports whether a failure of this kind waits for the owner instead of being retried: the
// remote moved elsewhere, the credentials, the repository's configuration, the remote itself.
func stops(k errs.Kind) bool {
	switch k {
	case errs.Conflict, errs.Unauthorized, errs.Refused, errs.Invalid, errs.NotFound:
		return true
	}
	return false
}

// MinBackoff is the first and shortest wait after a failed push.
const MinBackoff = 30 * time.Second

// Backoff is how long a remote waits before the next try after n failures in a row: 30 s, doubling,
// at most an hour.
func Backoff(n int) time.Duration {
	d := MinBackoff
	for i := 1; i < n && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// NextRetry is the earliest time a backing-off remote may be tried again; zero when none waits. Only
// the listed remotes count: what is kept of another is dropped (forget).
func (b *Backups) NextRetry(ctx context.Context) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, err := b.load()
	if err == nil {
		err = b.forget(ctx, m)
	}
	if err != nil {
		return time.Time{} // the next commit's push reads them again and fails with the sentence
	}
	var t time.Time
	for _, h := range m {
		if h.Failures > 0 && !h.Stopped && (t.IsZero() || h.NotUntil.Before(t)) {
			t = h.NotUntil
		}
	}
	return t
}
