package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is wrapped by every refusal of a box path that resolves outside the box: through a symlink
// pointing out, or a symlinked folder on the way; a read that resolves into .git or .box wraps it too.
// docs/SECURITY.md ("Paths, symlinks and the box tree") states the rule.
var ErrOutside = errors.New("it leads outside the box (a symlink pointing out?)")

// Host maps a box path to a host path under root, refusing anything that escapes the root, including
// through a symlink anywhere on the way. The target need not exist.
func Host(root, boxPath string) (string, error) {
	host, _, err := resolve(root, boxPath)
	return host, err
}

// resolve is Host, also returning the root with its own symlinks resolved.
func resolve(root, boxPath string) (host, realRoot string, err error) {
	clean, err := Clean(boxPath)
	if err != nil {
		return "", "", err
	}
	realRoot, err = filepath.EvalSymlinks(root)
	if err != nil {
		return "", "", fmt.Errorf("box root %s: %w", root, err)
	}
	host = filepath.Join(realRoot, filepath.FromSlash(clean))
	if !inside(realRoot, evalExisting(host)) {
		return "", "", fmt.Errorf("path %s: %w", clean, ErrOutside)
	}
	return host, realRoot, nil
}

// FromHost maps a host path (absolute or relative to the working directory) to its box path,
// refusing paths outside root. The path is followed as the kernel follows it (Resolve).
func FromHost(root, host string) (string, error) {
	abs := host
	if !filepath.IsAbs(abs) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		abs = Join(wd, host)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("box root %s: %w", root, err)
	}
	abs = Resolve(abs)
	rel, err := filepath.Rel(realRoot, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the box at %s", host, root)
	}
	if rel == "." {
		return "/", nil
	}
	return "/" + filepath.ToSlash(rel), nil
}

// inside reports whether the resolved path p lies under realRoot.
func inside(realRoot, p string) bool {
	rel, err := filepath.Rel(realRoot, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// evalExisting resolves symlinks in the longest existing prefix of p and appends the rest.
func evalExisting(p string) string {
	rest := ""
	cur := p
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrNotExist) {
			return filepath.Join(cur, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Join puts a relative path after dir as text, without cleaning it: "link/.." must reach Resolve whole,
// where the kernel's reading of it (the parent of the link's target) is not filepath.Join's (dir).
func Join(dir, rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return dir + string(filepath.Separator) + rel
}

// Resolve is the absolute path p names as the kernel follows it: part by part, each link followed where
// it stands, so a ".." after a link climbs from the link's target (link/.. is not the link's folder), and
// a link to nothing yet leads to its target (where a write through it would land). What lies past the
// first missing part is taken as written. A loop of links stops being followed after 40.
func Resolve(p string) string {
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(p)
	var at []string // the parts of the path followed so far
	path := func() string { return vol + sep + strings.Join(at, sep) }
	missing := -1 // the depth of a part that does not exist: nothing under it is looked up
	parts := strings.Split(p[len(vol):], sep)
	for i, links := 0, 0; i < len(parts); i++ {
		switch c := parts[i]; c {
		case "", ".":
		case "..":
			if len(at) > 0 {
				at = at[:len(at)-1]
			}
			if len(at) < missing {
				missing = -1
			}
		default:
			at = append(at, c)
			if missing >= 0 {
				continue
			}
			next := path()
			fi, err := os.Lstat(next)
			if err != nil {
				missing = len(at)
				continue
			}
			if fi.Mode()&fs.ModeSymlink == 0 || links >= 40 {
				continue
			}
			target, err := os.Readlink(next)
			if err != nil {
				continue
			}
			links++
			at = at[:len(at)-1]
			if filepath.IsAbs(target) {
				at = at[:0]
			}
			parts, i = append(strings.Split(target, sep), parts[i+1:]...), -1
		}
	}
	return path()
}
