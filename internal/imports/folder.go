package imports

import (
	"archive/zip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/layout"
)

// A folder (a basic-memory project, an Obsidian vault) is walked through an os.Root, so nothing it
// opens can resolve outside the folder; symlinks are not followed at all (reported). Hidden names
// (.obsidian, .git, .trash) are the tool's own files and are left out quietly. A name the box reserves
// at every depth (_content, _config, _bookkeeping, _publish) or that it never commits (_tmp) is left
// out with a report: it cannot live under /_content/imports/ (docs/IMPORTS.md).

type folderFile struct {
	rel  string // slash-separated, relative to the folder
	size int64
	open func() (io.ReadCloser, error)
}

func (r *reader) walk(fn func(f folderFile) error) error {
	fi, err := os.Stat(r.src.Path)
	if err != nil {
		return r.bad(r.src.Name, "it cannot be read (%v)", err)
	}
	if !fi.IsDir() {
		return r.walkZip(fn)
	}
	root, err := os.OpenRoot(r.src.Path)
	if err != nil {
		return r.bad(r.src.Name, "the folder cannot be opened (%v)", err)
	}
	defer func() { _ = root.Close() }() // read only
	var files []folderFile
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			r.skip(r.src.Name+"/"+p, "it cannot be read (%v)", err)
			return nil
		}
		if p == "." {
			return nil
		}
		where := r.src.Name + "/" + p
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			r.skip(where, "a symlink is never followed; copy what it points to into the folder to import it")
			return nil
		}
		if reason := r.unfit(p); reason != "" {
			r.skip(where, "%s", reason)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			r.skip(where, "it is not a plain file")
			return nil
		}
		info, err := d.Info()
		if err != nil {
			r.skip(where, "it cannot be read (%v)", err)
			return nil
		}
		if len(files) >= r.opts.MaxFiles {
			return r.bad(r.src.Name, "it holds more than %d files; import a smaller folder", r.opts.MaxFiles)
		}
		files = append(files, folderFile{rel: p, size: info.Size()})
		r.all += info.Size()
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range files {
		if f.size > r.opts.MaxEntry {
			return r.tooBig(r.src.Name + "/" + f.rel)
		}
		name := f.rel
		f.open = func() (io.ReadCloser, error) {
			h, err := root.Open(name)
			if err != nil {
				return nil, err
			}
			return &limited{rc: h, rd: r.progress(h), left: r.opts.MaxEntry, r: r, where: r.src.Name + "/" + name}, nil
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// walkZip walks a zip of a folder (a vault or a project zipped, as the web UI uploads it) as the
// folder itself: entries in lexical order, each a stream through the zip limits, and nothing extracted
// to disk. The checks are the folder's: an entry whose name leaves the archive, a symlink entry, a
// reserved name are listed and left out; hidden names and __MACOSX are the tools' own. A zip that
// wraps everything in one folder is read from inside it.
func (r *reader) walkZip(fn func(f folderFile) error) error {
	zr, err := openZip(r.src.Path)
	if err != nil {
		return r.zipBad(err, "it is neither a folder nor a zip of one")
	}
	defer func() { _ = zr.Close() }() // read only
	type entry struct {
		rel string
		f   *zip.File
	}
	var ents []entry
	for _, f := range zr.File {
		if !safeName(f.Name) {
			r.skip(r.src.Name+": "+printable(f.Name), "an archive entry whose name leaves the archive (absolute, .. or a backslash) is never read")
			continue
		}
		if f.FileInfo().IsDir() {
			continue
		}
		ents = append(ents, entry{rel: path.Clean(f.Name), f: f})
	}
	top := ""
	for i, e := range ents {
		d, _, ok := strings.Cut(e.rel, "/")
		if !ok || (i > 0 && d != top) {
			top = ""
			break
		}
		top = d
	}
	var files []folderFile
	seen := map[string]bool{}
	for _, e := range ents {
		rel := e.rel
		if top != "" {
			rel = strings.TrimPrefix(rel, top+"/")
		}
		where := r.src.Name + ": " + rel
		if hidden(rel) {
			continue
		}
		if e.f.Mode()&fs.ModeSymlink != 0 {
			r.skip(where, "a symlink is never followed; put what it points to into the zip to import it")
			continue
		}
		if !e.f.Mode().IsRegular() {
			r.skip(where, "it is not a plain file")
			continue
		}
		if reason := r.unfit(rel); reason != "" {
			r.skip(where, "%s", reason)
			continue
		}
		if seen[rel] {
			r.skip(where, "the archive holds this name twice; only the first is read")
			continue
		}
		seen[rel] = true
		if len(files) >= r.opts.MaxFiles {
			return r.bad(r.src.Name, "it holds more than %d files; import a smaller folder", r.opts.MaxFiles)
		}
		zf := e.f
		files = append(files, folderFile{rel: rel, size: int64(zf.UncompressedSize64), open: func() (io.ReadCloser, error) { return r.openEntry(zf, where) }})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	for _, f := range files {
		if f.size > r.opts.MaxEntry {
			return r.tooBig(r.src.Name + ": " + f.rel)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// hidden reports a path with a hidden segment (.obsidian, .git, ._file) or macOS's __MACOSX: the
// tools' own files, left out quietly.
func hidden(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") || seg == "__MACOSX" {
			return true
		}
	}
	return false
}

// unfit says why a folder entry cannot live under /_content/imports/<folder>/, or "".
func (r *reader) unfit(rel string) string {
	for _, seg := range strings.Split(rel, "/") {
		if seg == "_tmp" {
			return "a folder named _tmp is the box's scratch space and never committed; rename it to import it"
		}
	}
	dest := "/_content/imports/" + r.src.Folder + "/" + rel
	if _, err := layout.Clean(dest); err != nil {
		return "its name cannot be a box path (" + err.Error() + "); rename it to import it"
	}
	if off, bad := layout.ReservedOffender(dest); bad {
		return "the box reserves the name " + path.Base(off) + " at every depth; rename it to import it"
	}
	return ""
}

// errTooBig is a folder file past MaxFolderFile, whatever its size said (a zip entry's header may lie).
var errTooBig = errors.New("the file is bigger than an import reads")

// readAll reads a folder file whole (a Markdown note is one document), at most MaxFolderFile bytes.
func readAll(f folderFile) ([]byte, error) {
	if f.size > MaxFolderFile {
		return nil, errTooBig
	}
	rc, err := f.open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxFolderFile+1))
	if err == nil && len(data) > MaxFolderFile {
		return nil, errTooBig
	}
	return data, err
}
