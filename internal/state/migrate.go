package state

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/boxmem/box/internal/errs"
)

// migration is one step of the schema: version n turns a version n-1 file into a version n one.
// Steps are only ever appended; a released step is never edited (a file in the wild ran it as it was).
type migration struct {
	version int
	what    string
	sql     string
}

// migrations is the whole history of state.db. Version 1 is the schema the stores made for themselves
// before this package owned the file: its statements are IF NOT EXISTS, so such a file is adopted as it
// is, with its rows.
var migrations = []migration{
	{1, "connections, flags, OAuth grants, passkeys and sessions", `
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
CREATE TABLE IF NOT EXISTS oauth_clients(id TEXT PRIMARY KEY, name TEXT NOT NULL, redirect_uris TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_requests(id TEXT PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL, state TEXT NOT NULL,
	challenge TEXT NOT NULL, resource TEXT NOT NULL, scopes TEXT NOT NULL, expires INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_grants(id TEXT PRIMARY KEY, client_id TEXT NOT NULL, client TEXT NOT NULL, host TEXT NOT NULL,
	memory INTEGER NOT NULL, messages INTEGER NOT NULL, build INTEGER NOT NULL, created INTEGER NOT NULL,
	build_until INTEGER NOT NULL DEFAULT 0, issued INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0,
	last_used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS oauth_codes(hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL,
	challenge TEXT NOT NULL, resource TEXT NOT NULL, expires INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS oauth_tokens(hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, kind TEXT NOT NULL, scope TEXT NOT NULL,
	resource TEXT NOT NULL, expires INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens(grant_id);
CREATE TABLE IF NOT EXISTS web_owner (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS web_passkeys (id TEXT PRIMARY KEY, name TEXT NOT NULL, cred TEXT NOT NULL, created INTEGER NOT NULL, last_used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS web_sessions (hash TEXT PRIMARY KEY, csrf TEXT NOT NULL, created INTEGER NOT NULL, seen INTEGER NOT NULL, uv INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS web_setup (hash TEXT PRIMARY KEY, expires INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0);
`},
	{2, "OAuth codes and consent requests are found by their expiry when they are swept", `
CREATE INDEX IF NOT EXISTS oauth_codes_expires ON oauth_codes(expires);
CREATE INDEX IF NOT EXISTS oauth_requests_expires ON oauth_requests(expires);
`},
	{3, "OAuth: new clients per source, the redirect URIs the owner approved, the issuer of each request", `
CREATE TABLE IF NOT EXISTS oauth_client_sources(source TEXT NOT NULL, created INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS oauth_client_sources_source ON oauth_client_sources(source, created);
CREATE TABLE IF NOT EXISTS oauth_approved_redirects(client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL, PRIMARY KEY(client_id, redirect_uri));
CREATE TABLE IF NOT EXISTS oauth_request_issuers(id TEXT PRIMARY KEY, issuer TEXT NOT NULL);
`},
	{4, "OAuth: consent requests are kept per client and source", `
ALTER TABLE oauth_requests ADD COLUMN source TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS oauth_requests_source ON oauth_requests(source, client_id, expires);
`},
}

// Version is the schema version this binary writes.
func Version() int { return migrations[len(migrations)-1].version }

// migrate brings the file to Version in one transaction per step, recording each in the migrations
// table. A file of a newer version is refused before anything is written.
func (s *Store) migrate(ctx context.Context) error {
	const op = "state.migrate"
	// In an IMMEDIATE transaction: as a bare statement it starts as a reader and, when another opener
	// wrote meanwhile, fails at once with "database is locked" instead of waiting its turn.
	err := s.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations(version INTEGER PRIMARY KEY, what TEXT NOT NULL, applied INTEGER NOT NULL)`)
		return err
	})
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "The box's state file "+s.path+" could not be read as a database; move it aside and run the box again to start a new one (keys and sign-ins start over)")
	}
	have, err := s.version(ctx)
	if err != nil {
		return err
	}
	if have > Version() {
		return errs.E(op, errs.NotABox, "The box's state file %s was written by a newer box (schema %d; this one knows %d); upgrade the box binary, nothing was changed", s.path, have, Version())
	}
	for _, m := range migrations {
		if m.version <= have {
			continue
		}
		err := s.Tx(ctx, func(tx *sql.Tx) error {
			// Another process may have run this step while this one waited for the write lock.
			var done int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM migrations WHERE version=?`, m.version).Scan(&done); err != nil || done > 0 {
				return err
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO migrations(version, what, applied) VALUES(?, ?, ?)`, m.version, m.what, s.now().Unix())
			return err
		})
		if err != nil {
			return errs.Wrap(op, errs.Other, err, fmt.Sprintf("The box's state file could not be brought to schema %d (%s); it is left at %d", m.version, m.what, have))
		}
		have = m.version
	}
	return nil
}

// version is the newest migration the file has run, 0 for a new or pre-migration file.
func (s *Store) version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM migrations`).Scan(&v); err != nil {
		return 0, errs.Wrap("state.migrate", errs.Other, err, "The box's state file could not be read")
	}
	return int(v.Int64), nil
}
