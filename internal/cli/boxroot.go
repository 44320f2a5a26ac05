package cli

import "github.com/boxmem/box/internal/errs"

// boxRoot finds the box: --box, else $BOX_DIR, else the nearest box above the working directory.
func (a *App) boxRoot() (string, error) {
	return "", errs.E("cli", errs.NotABox, "box discovery is not wired yet")
}
