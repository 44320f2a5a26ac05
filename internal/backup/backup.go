// Package backup owns the box's off-machine copies (docs/BACKUP.md): adding and removing backup
// remotes with their tokens sealed in the vault, how far each is behind, pushing the box's branch to
// every one with a backoff after failures that can pass, and what a failure tells the owner. The git
// side (remotes, push, clone, askpass) is internal/git's; scheduling the pushes is the job runner's.
package backup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/vault"
)

// Config is what the backups need of the process.
type Config struct {
	Repo    *git.Repo
	Vault   func() (*vault.Vault, error) // opened on first use
	Askpass string                       // the box binary, for git's askpass (os.Executable)
	Now     func() time.Time
}

// Backups are the box's backup remotes. Safe for concurrent use.
type Backups struct {
	cfg Config

	mu    sync.Mutex
	state map[string]*health // by remote name
}

// health is what the process knows of a remote's recent pushes.
type health struct {
	failures int
	lastErr  string
	kind     errs.Kind
	notUntil time.Time // no retry before this
}

// New is the backups of one box.
func New(cfg Config) *Backups {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Backups{cfg: cfg, state: map[string]*health{}}
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
	if v, err := b.cfg.Vault(); err == nil {
		if err := v.Delete(TokenName(name)); err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
	}
	b.mu.Lock()
	delete(b.state, name)
	b.mu.Unlock()
	return nil
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
	for _, r := range rs {
		s := Status{Remote: r}
		if h := b.state[r.Name]; h != nil && h.failures > 0 {
			s.Failing, s.Error, s.NextRetry, s.Stopped = true, h.lastErr, h.notUntil, stops(h.kind)
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
	round := Round{Pushed: []Pushed{}}
	for _, r := range rs {
		now := b.cfg.Now()
		b.mu.Lock()
		h := b.state[r.Name]
		if h == nil {
			h = &health{}
			b.state[r.Name] = h
		}
		wait := h.failures > 0 && !asked && !force && (stops(h.kind) || now.Before(h.notUntil))
		b.mu.Unlock()
		if wait {
			why := fmt.Sprintf("backing off after %d failed pushes until %s", h.failures, h.notUntil.Format(time.RFC3339))
			if stops(h.kind) {
				why = "stopped until the owner acts: " + h.lastErr
			}
			round.Pushed = append(round.Pushed, Pushed{Remote: r.Name, Skipped: why})
			continue
		}
		if !force && r.Behind == 0 && r.Pushed != "" && h.failures == 0 {
			round.Pushed = append(round.Pushed, Pushed{Remote: r.Name, Commit: r.Pushed, Unchanged: true})
			continue
		}
		auth, err := b.auth(r.Name)
		var res git.PushResult
		if err == nil {
			res, err = b.cfg.Repo.Push(ctx, r.Name, force, auth)
		}
		b.mu.Lock()
		if err != nil {
			msg := errs.Sentence(err)
			if msg == "" {
				msg = err.Error()
			}
			p := Pushed{Remote: r.Name, Error: msg, New: msg != h.lastErr}
			h.failures++
			h.lastErr, h.kind = msg, errs.KindOf(err)
			h.notUntil = now.Add(Backoff(h.failures))
			round.Pushed = append(round.Pushed, p)
		} else {
			round.Pushed = append(round.Pushed, Pushed{Remote: r.Name, Commit: res.Commit, Unchanged: res.Unchanged, New: h.failures > 0})
			*h = health{}
		}
		b.mu.Unlock()
	}
	return round, nil
}

// auth is how a push to name proves itself: its token from the vault, when it has one (ssh remotes use
// the owner's agent and need none).
func (b *Backups) auth(name string) (git.Auth, error) {
	a := git.Auth{Askpass: b.cfg.Askpass}
	v, err := b.cfg.Vault()
	if err != nil {
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

// Backoff is how long a remote waits before the next try after n failures in a row: 30 s, doubling,
// at most an hour.
func Backoff(n int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < n && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// NextRetry is the earliest time a backing-off remote may be tried again; zero when none waits.
func (b *Backups) NextRetry() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	var t time.Time
	for _, h := range b.state {
		if h.failures > 0 && !stops(h.kind) && (t.IsZero() || h.notUntil.Before(t)) {
			t = h.notUntil
		}
	}
	return t
}
