//go:build unix

package vault

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether the file belongs to the user this process runs as, and its owner.
func ownedByMe(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), int(st.Uid) == os.Geteuid()
}
