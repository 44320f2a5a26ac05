package index

import (
	"context"

	"github.com/boxmem/box/internal/errs"
)

// Compact rewrites the file without its free pages and empties the write-ahead log, so that text the
// index no longer holds cannot be read back from the file (erase needs it after a Clear).
func (ix *Index) Compact(ctx context.Context) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	for _, q := range []string{`PRAGMA wal_checkpoint(TRUNCATE)`, `VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := ix.wdb.ExecContext(ctx, q); err != nil {
			return errs.Wrap("index.compact", errs.Other, err, "The search index could not be rewritten")
		}
	}
	return nil
}
