// Package keys owns the connections of other assistants in the box's state store: mbx_ keys (stored only
// as SHA-256), their checkboxes and last use. It opens no file (package state does) and decides no switch.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/state"
)

// Prefix starts every key the box makes.
const Prefix = "mbx_"

// Lifetimes of a key: six calendar months, or 30 days for a key that can build.
const (
	LifetimeMonths = 6
	BuildLifetime  = 30 * 24 * time.Hour
)

// Caps are the checkboxes of a connection. Reading memory is always in.
type Caps struct {
	Memory   bool `json:"memory"`
	Messages bool `json:"messages"`
	Build    bool `json:"build"`
}

// NoAccounts is why "My messages and mail" is never ticked: no message or mail account can be plugged
// into a box yet (docs/MCP.md, "Tools"), so a key or grant that could read them would promise nothing.
const NoAccounts = "No message or mail account can be plugged into this box yet, so a key cannot read messages or mail; make it without that checkbox"

// All is every checkbox: a local process running as the owner is the owner.
var All = Caps{Memory: true, Messages: true, Build: true}

// Names lists the ticked checkboxes as the owner sees them, reading first.
func (c Caps) Names() []string {
	n := []string{"Reading memory"}
	if c.Memory {
		n = append(n, "Memory")
	}
	if c.Messages {
		n = append(n, "My messages and mail")
	}
	if c.Build {
		n = append(n, "Can build for my box")
	}
	return n
}

// Connection is one key as the owner sees it; the key itself is never kept.
type Connection struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Caps       Caps      `json:"caps"`
	Created    time.Time `json:"created"`
	Expires    time.Time `json:"expires"`
	Revoked    time.Time `json:"revoked,omitzero"`
	LastUsed   time.Time `json:"lastUsed,omitzero"`
	LastHost   string    `json:"lastHost,omitempty"`
	LastClient string    `json:"lastClient,omitempty"`
}

// Store is the connections table of the box's state store. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	now   func() time.Time
	cache *state.Cache[Connection] // by the key's hash

	mu    sync.Mutex
	uses  map[string]use // last uses not yet written, by connection id
	stop  chan struct{}
	done  chan struct{}
	close sync.Once
}

type use struct {
	at           time.Time
	host, client string
}

// flushEvery is how often last uses are written: one write per interval, not one per call.
const flushEvery = 5 * time.Second

// NewStore is the connections of the state store st (which owns the file and its schema), stamped with
// st's clock.
func NewStore(st *state.Store) *Store {
	s := &Store{db: st.DB(), now: st.Now, cache: state.NewCache[Connection](st),
		uses: map[string]use{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.flushLoop()
	return s
}

// Close writes the pending last uses; the state store itself is closed by whoever opened it.
func (s *Store) Close() error {
	s.close.Do(func() { close(s.stop); <-s.done })
	return s.flush()
}

// New makes a key with the given checkboxes and returns it in plain text, once. Whether a key may be made
// at all is the gate's to say (the access switch): callers ask it first.
func (s *Store) New(ctx context.Context, name string, caps Caps) (Connection, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 80 {
		return Connection{}, "", errs.E("keys.new", errs.Invalid, "A key needs a name of 1 to 80 characters, such as the assistant it is for")
	}
	if Reserved(name) {
		return Connection{}, "", errs.E("keys.new", errs.Invalid, "%q is the owner's own name in the diary and on cards; name the key for the assistant that uses it", name)
	}
	if caps.Messages {
		return Connection{}, "", errs.E("keys.new", errs.Invalid, "%s", NoAccounts)
	}
	token := Prefix + random(32)
	now := s.now().UTC().Truncate(time.Second)
	expires := now.AddDate(0, LifetimeMonths, 0)
	if caps.Build {
		expires = now.Add(BuildLifetime)
	}
	c := Connection{ID: "k_" + random(5)[:8], Name: name, Caps: caps, Created: now, Expires: expires}
	_, err := s.db.ExecContext(ctx, `INSERT INTO connections(id,name,hash,memory,messages,build,created,expires) VALUES(?,?,?,?,?,?,?,?)`,
		c.ID, c.Name, Hash(token), caps.Memory, caps.Messages, caps.Build, c.Created.Unix(), c.Expires.Unix())
	if err != nil {
		return Connection{}, "", errs.Wrap("keys.new", errs.Other, err, "")
	}
	return c, token, nil
}

// Hash is how a key is stored: SHA-256, hex.
func Hash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

const columns = `id,name,memory,messages,build,created,expires,revoked,last_used,last_host,last_client`

func scan(row interface{ Scan(...any) error }) (Connection, error) {
	var c Connection
	var created, expires, revoked, used int64
	err := row.Scan(&c.ID, &c.Name, &c.Caps.Memory, &c.Caps.Messages, &c.Caps.Build, &created, &expires, &revoked, &used, &c.LastHost, &c.LastClient)
	c.Created, c.Expires = time.Unix(created, 0).UTC(), time.Unix(expires, 0).UTC()
	if revoked != 0 {
		c.Revoked = time.Unix(revoked, 0).UTC()
	}
	if used != 0 {
		c.LastUsed = time.Unix(used, 0).UTC()
	}
	return c, err
}

// List returns every connection, newest first, with its last use.
func (s *Store) List(ctx context.Context) ([]Connection, error) {
	if err := s.flush(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM connections ORDER BY created DESC, id`)
	if err != nil {
		return nil, errs.Wrap("keys.list", errs.Other, err, "")
	}
	defer rows.Close()
	list := []Connection{}
	for rows.Next() {
		c, err := scan(rows)
		if err != nil {
			return nil, errs.Wrap("keys.list", errs.Other, err, "")
		}
		list = append(list, c)
	}
	return list, rows.Err()
}

// Revoke ends a connection; its next call is refused.
func (s *Store) Revoke(ctx context.Context, id string) (Connection, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE connections SET revoked=? WHERE id=? AND revoked=0`, s.now().Unix(), id)
	if err != nil {
		return Connection{}, errs.Wrap("keys.revoke", errs.Other, err, "")
	}
	n, _ := res.RowsAffected()
	c, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM connections WHERE id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Connection{}, errs.E("keys.revoke", errs.NotFound, "There is no key %q; `box keys list` shows them", id)
	}
	if err != nil {
		return Connection{}, errs.Wrap("keys.revoke", errs.Other, err, "")
	}
	if n == 0 {
		return c, errs.E("keys.revoke", errs.Conflict, "The key %q was already revoked on %s", id, day(c.Revoked))
	}
	return c, nil
}

// Verify checks a presented key. A refusal is an errs.Unauthorized with a sentence for the client.
func (s *Store) Verify(ctx context.Context, token string) (Connection, error) {
	if !strings.HasPrefix(token, Prefix) {
		return Connection{}, errs.E("keys.verify", errs.Unauthorized,
			"This is not a box key (they start with mbx_); the owner makes one with `box keys new` or in Settings → Other assistants")
	}
	c, err := s.lookup(ctx, Hash(token))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Connection{}, errs.E("keys.verify", errs.Unauthorized,
			"This key is not known to this box; the owner makes a new one with `box keys new` or in Settings → Other assistants")
	case err != nil:
		return Connection{}, errs.Wrap("keys.verify", errs.Other, err, "")
	case !c.Revoked.IsZero():
		return c, errs.E("keys.verify", errs.Unauthorized,
			"This key was revoked on %s; the owner makes a new one with `box keys new` or in Settings → Other assistants", day(c.Revoked))
	case !s.now().Before(c.Expires):
		return c, errs.E("keys.verify", errs.Unauthorized, "This key expired on %s; make a new one with `box keys new`", day(c.Expires))
	}
	return c, nil
}

// lookup reads the connection of a key's hash, kept while state.db is unchanged (state.Cache): a revoke, by
// this process or the owner's CLI in another, is seen by the very next call.
func (s *Store) lookup(ctx context.Context, hash string) (Connection, error) {
	return s.cache.Get(ctx, hash, func() (Connection, error) {
		return scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM connections WHERE hash=?`, hash))
	})
}

func day(t time.Time) string { return t.UTC().Format("2 January 2006") }

// Touch records a use of a connection. It is kept in memory and written every few seconds.
func (s *Store) Touch(id, host, client string) {
	s.mu.Lock()
	u := s.uses[id]
	u.at = s.now()
	if host != "" {
		u.host = host
	}
	if client != "" {
		u.client = client
	}
	s.uses[id] = u
	s.mu.Unlock()
}

func (s *Store) flushLoop() {
	defer close(s.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			_ = s.flush() // see flush: a lost last-use time fails no call

		}
	}
}

// flush writes the pending last uses in one transaction. A failure is reported to Close and List; the
// background loop drops it, since a lost last-use time is not worth failing a call for.
func (s *Store) flush() error {
	s.mu.Lock()
	pending := s.uses
	s.uses = map[string]use{}
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	tx, err := s.db.Begin()
	if err != nil {
		return errs.Wrap("keys.flush", errs.Other, err, "")
	}
	for id, u := range pending {
		if _, err := tx.Exec(`UPDATE connections SET last_used=?, last_host=CASE WHEN ?='' THEN last_host ELSE ? END,
			last_client=CASE WHEN ?='' THEN last_client ELSE ? END WHERE id=?`, u.at.Unix(), u.host, u.host, u.client, u.client, id); err != nil {
			return errs.Wrap("keys.flush", errs.Other, errors.Join(err, tx.Rollback()), "")
		}
	}
	if err := tx.Commit(); err != nil {
		return errs.Wrap("keys.flush", errs.Other, err, "")
	}
	return nil
}

// DeleteAll ends every connection and forgets it, names included (erase): nothing of them is kept.
func (s *Store) DeleteAll(ctx context.Context) error {
	s.mu.Lock()
	s.uses = map[string]use{}
	s.mu.Unlock()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM connections`); err != nil {
		return errs.Wrap("keys.deleteall", errs.Other, err, "The keys could not be removed")
	}
	return nil
}

// Reserved reports a name an assistant may not take: "owner" is how the diary and the cards name the
// owner's own actions, so an assistant called that would read as the owner.
func Reserved(name string) bool {
	return strings.EqualFold(strings.TrimSpace(name), "owner") || strings.EqualFold(strings.TrimSpace(name), "the owner")
}
