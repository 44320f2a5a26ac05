package imports

import (
	"archive/zip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/boxmem/box/internal/errs"
)

// An export (ChatGPT, Claude) arrives as a zip or as the folder it unpacks to. Either way only named
// files are read, as streams: nothing is extracted to disk, so an entry named "../../x" has nowhere to
// go, and is reported and ignored. A zip entry is read through a limit on its decompressed size and on
// its ratio to its compressed size (a zip bomb stops with an error, not a full disk or memory).

// archive is a zip or a folder, read by name.
type archive struct {
	r      *reader
	zr     *zipReader
	dir    *os.Root
	byName map[string]*zip.File
}

func (r *reader) openArchive() (*archive, error) {
	a := &archive{r: r}
	fi, err := os.Stat(r.src.Path)
	if err != nil {
		return nil, r.bad(r.src.Name, "it cannot be read (%v)", err)
	}
	if fi.IsDir() {
		if a.dir, err = os.OpenRoot(r.src.Path); err != nil {
			return nil, r.bad(r.src.Name, "the folder cannot be opened (%v)", err)
		}
		return a, nil
	}
	if a.zr, err = openZip(r.src.Path); err != nil {
		return nil, r.zipBad(err, "it is neither a folder nor a zip archive")
	}
	a.byName = map[string]*zip.File{}
	for _, f := range a.zr.File {
		if !safeName(f.Name) {
			r.skip(r.src.Name+": "+printable(f.Name), "an archive entry whose name leaves the archive (absolute, .. or a backslash) is never read")
			continue
		}
		a.byName[path.Clean(f.Name)] = f
	}
	return a, nil
}

func (a *archive) Close() error {
	if a.zr != nil {
		return a.zr.Close()
	}
	return a.dir.Close()
}

// safeName reports a zip entry name that stays inside the archive.
func safeName(n string) bool {
	return n != "" && !strings.HasPrefix(n, "/") && !strings.ContainsAny(n, "\\\x00") && !strings.Contains(n, ":") &&
		fs.ValidPath(strings.TrimSuffix(n, "/"))
}

func printable(s string) string { return fmt.Sprintf("%q", s) }

// find looks for name at the top, or inside one folder at the top (a zip that wraps its files in a
// folder). It returns the path found, or "".
func (a *archive) find(name string) string {
	if a.exists(name) {
		return name
	}
	var dirs []string
	if a.zr != nil {
		seen := map[string]bool{}
		for n := range a.byName {
			if d, rest, ok := strings.Cut(n, "/"); ok && rest == name && !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	} else if ents, err := fs.ReadDir(a.dir.FS(), "."); err == nil {
		for _, e := range ents {
			if e.IsDir() && a.exists(e.Name()+"/"+name) {
				dirs = append(dirs, e.Name())
			}
		}
	}
	if len(dirs) == 1 {
		return dirs[0] + "/" + name
	}
	return ""
}

func (a *archive) exists(name string) bool {
	if a.zr != nil {
		f, ok := a.byName[name]
		return ok && !f.FileInfo().IsDir()
	}
	fi, err := a.dir.Lstat(name)
	return err == nil && fi.Mode().IsRegular()
}

// open opens a file of the archive as a stream, through the size and ratio limits and the progress count.
func (a *archive) open(name string) (io.ReadCloser, error) {
	where := a.r.src.Name + ": " + name
	if a.zr != nil {
		f, ok := a.byName[name]
		if !ok {
			return nil, a.r.bad(where, "the archive has no such file")
		}
		return a.r.openEntry(f, where)
	}
	fi, err := a.dir.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, a.r.bad(where, "it is not a plain file (a symlink is never followed)")
	}
	if fi.Size() > a.r.opts.MaxEntry {
		return nil, a.r.tooBig(where)
	}
	f, err := a.dir.Open(name)
	if err != nil {
		return nil, a.r.bad(where, "it cannot be read (%v)", err)
	}
	a.r.all += fi.Size()
	return &limited{rc: f, rd: a.r.progress(f), left: a.r.opts.MaxEntry, r: a.r, where: where}, nil
}

// openEntry opens one zip entry as a stream through the limits on its decompressed size and on its
// ratio to its compressed size.
func (r *reader) openEntry(f *zip.File, where string) (io.ReadCloser, error) {
	if f.UncompressedSize64 > uint64(r.opts.MaxEntry) {
		return nil, r.tooBig(where)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, r.bad(where, "it cannot be read from the archive (%v)", err)
	}
	r.all += int64(f.UncompressedSize64)
	limit := r.opts.MaxEntry
	if c := int64(f.CompressedSize64); c > 0 && c*r.opts.MaxRatio < limit {
		limit = max(c*r.opts.MaxRatio, 1<<20)
	}
	return &limited{rc: rc, rd: r.progress(rc), left: limit, r: r, where: where}, nil
}

func (r *reader) tooBig(where string) error {
	return r.limit(where, "it is bigger than the %d MiB an import reads from one file", r.opts.MaxEntry>>20)
}

// limit is the error for a source past a limit (docs/IMPORTS.md): where, which limit, what to do.
func (r *reader) limit(where, format string, a ...any) error {
	return errs.E("imports."+r.src.Kind, errs.Limited, "%s: %s; nothing was imported. Split the source, or check that it is the export you meant.", where, fmt.Sprintf(format, a...))
}

// limited stops a stream past its limit with an error: a zip entry that inflates beyond what its
// header or its ratio allows is a bomb.
type limited struct {
	rc    io.ReadCloser
	rd    io.Reader
	left  int64
	r     *reader
	where string
}

// Read reads at most one byte past what is left, so a stream of exactly the limit ends well and one byte
// more is the error.
func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.bomb()
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.rd.Read(p)
	l.left -= int64(n)
	l.r.total += int64(n)
	if l.r.total > l.r.opts.MaxTotal {
		return n, l.r.limit(l.where, "the import would read more than %d MiB in all", l.r.opts.MaxTotal>>20)
	}
	if l.left < 0 {
		return n, l.bomb()
	}
	return n, err
}

func (l *limited) bomb() error {
	return l.r.limit(l.where, "it inflates past what an import reads from one file (over %d times its compressed size, or %d MiB): a zip bomb or a damaged archive", l.r.opts.MaxRatio, l.r.opts.MaxEntry>>20)
}

func (l *limited) Close() error { return l.rc.Close() }

// openFile opens the source itself (a single-file kind) as a stream with the same limits.
func (r *reader) openFile() (io.ReadCloser, error) {
	where := r.src.Name
	fi, err := os.Stat(r.src.Path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, r.bad(where, "it is not a file")
	}
	if fi.Size() > r.opts.MaxEntry {
		return nil, r.tooBig(where)
	}
	f, err := os.Open(r.src.Path)
	if err != nil {
		return nil, r.bad(where, "it cannot be read (%v)", err)
	}
	r.all = fi.Size()
	return &limited{rc: f, rd: r.progress(f), left: r.opts.MaxEntry, r: r, where: where}, nil
}
