package index

import (
	"context"

	"github.com/boxmem/box/internal/sqlitefile"
)

// Compact rewrites the file without its free pages and empties the write-ahead log, so that text the
// index no longer holds cannot be read back from the file (erase needs it after a Clear). A log another
// process's reader holds past sqlitefile.Wait is an error, never a silent success.
func (ix *Index) Compact(ctx context.Context) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	return sqlitefile.Compact(ctx, ix.wdb, ix.path, "search index")
}
