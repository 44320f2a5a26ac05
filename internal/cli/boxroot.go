package cli

import (
	"path/filepath"

	"github.com/boxmem/box/internal/box"
)

// boxRoot finds the box: --box, else $BOX_DIR, else the nearest box above the working directory.
// Relative folders are read against the command's working directory.
func (a *App) boxRoot() (string, error) {
	getenv := a.IO.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return box.Discover(a.abs(a.BoxFlag), a.abs(getenv("BOX_DIR")), a.IO.Cwd)
}

// withBox opens the box (see boxRoot) for fn and closes it after.
func (a *App) withBox(fn func(b *box.Box) error) error {
	root, err := a.boxRoot()
	if err != nil {
		return err
	}
	b, err := box.Open(root)
	if err != nil {
		return err
	}
	defer b.Close()
	return fn(b)
}

// abs makes a folder named on the command line absolute against the command's working directory.
func (a *App) abs(dir string) string {
	if dir == "" || filepath.IsAbs(dir) || a.IO.Cwd == "" {
		return dir
	}
	return filepath.Join(a.IO.Cwd, dir)
}
