// Package keys owns the box's runtime state in <box>/.box/state.db: the connections of other assistants
// (mbx_ keys, stored only as SHA-256), their checkboxes and last use, and the frozen and locked flags.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/errs"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
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

// Store is the open state.db of one box. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	root string
	now  func() time.Time

	fmu   sync.Mutex
	flags flagCache

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

const schema = `
CREATE TABLE IF NOT EXISTS connections(
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	memory INTEGER NOT NULL,
	messages INTEGER NOT NULL,
	build INTEGER NOT NULL,
	created INTEGER NOT NULL,
	expires INTEGER NOT NULL,
	revoked INTEGER NOT NULL DEFAULT 0,
	last_used INTEGER NOT NULL DEFAULT 0,
	last_host TEXT NOT NULL DEFAULT '',
	last_client TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS flags(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
`

// Open opens or creates <root>/.box/state.db. now may be nil for the wall clock.
func Open(root string, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	path := filepath.Join(root, ".box", "state.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.Wrap("keys.open", errs.Other, err, "")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, errs.Wrap("keys.open", errs.Other, err, "")
	}
	db.SetMaxOpenConns(16) // every call reads a key; WAL readers do not block each other
	db.SetMaxIdleConns(16)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, errs.Wrap("keys.open", errs.Other, err, "The box's state file could not be opened")
	}
	os.Chmod(path, 0o600)
	s := &Store{db: db, root: root, now: now, uses: map[string]use{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.flushLoop()
	return s, nil
}

// Close writes the pending last uses and closes the file.
func (s *Store) Close() error {
	s.close.Do(func() { close(s.stop); <-s.done })
	s.flush()
	return s.db.Close()
}

// New makes a key with the given checkboxes and returns it in plain text, once.
func (s *Store) New(ctx context.Context, name string, caps Caps) (Connection, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 80 {
		return Connection{}, "", errs.E("keys.new", errs.Invalid, "A key needs a name of 1 to 80 characters, such as the assistant it is for")
	}
	if Reserved(name) {
		return Connection{}, "", errs.E("keys.new", errs.Invalid, "%q is the owner's own name in the diary and on cards; name the key for the assistant that uses it", name)
	}
	if never, err := s.accessNever(); err != nil {
		return Connection{}, "", err
	} else if never {
		return Connection{}, "", errs.E("keys.new", errs.Refused,
			"No new key was made: \"Give other assistants access\" is set to Never; the owner changes it in Settings → What I may do (_config/switches.card, access)")
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
	s.flush()
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
	c, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM connections WHERE hash=?`, Hash(token)))
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
			s.flush()
		}
	}
}

// flush writes the pending last uses in one transaction.
func (s *Store) flush() {
	s.mu.Lock()
	pending := s.uses
	s.uses = map[string]use{}
	s.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	tx, err := s.db.Begin()
	if err != nil {
		return // a lost last-use time is not worth failing a call for
	}
	for id, u := range pending {
		tx.Exec(`UPDATE connections SET last_used=?, last_host=CASE WHEN ?='' THEN last_host ELSE ? END,
			last_client=CASE WHEN ?='' THEN last_client ELSE ? END WHERE id=?`, u.at.Unix(), u.host, u.host, u.client, u.client, id)
	}
	tx.Commit()
}

// Reserved reports a name an assistant may not take: "owner" is how the diary and the cards name the
// owner's own actions, so an assistant called that would read as the owner.
func Reserved(name string) bool {
	return strings.EqualFold(strings.TrimSpace(name), "owner") || strings.EqualFold(strings.TrimSpace(name), "the owner")
}
