package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/imports"
	"github.com/boxmem/box/internal/memory"
	"golang.org/x/sys/unix"
)

// Settings → Bring your memories (docs/IMPORTS.md, "In the web UI"): the owner uploads a file, sees the
// dry run, and imports it as one change with its Undo; the export buttons download the memory. An
// upload is untrusted input: its body is streamed to a private temp folder outside the box, under a
// size limit, read by the same readers and limits as `box import`, and removed after the import, a
// cancel, or when it has waited too long. Its process holds a lock on its folder while it waits, so a
// folder nobody holds was left by a process that died, and the next start removes it.

// DefaultMaxUpload bounds one upload when Config.MaxUpload is 0.
const DefaultMaxUpload = 512 << 20

// uploadWait is how long an uploaded file waits for the owner to import it after its dry run.
const uploadWait = 30 * time.Minute

// importPath is the one request whose body may be bigger than the web UI's 1 MiB.
const importUploadPath = "/settings/import/upload"

// upload is a file waiting between its dry run and its import.
type upload struct {
	id      string
	session string   // the session that uploaded it: no other may import it
	dir     string   // its private folder, removed with it
	hold    *os.File // the folder, open and locked while the upload waits (see sweepUploads)
	path    string
	name    string
	kind    string
	res     memory.ImportResult
	expires time.Time
}

// uploads holds the waiting uploads: at most one per session.
type uploads struct {
	mu   sync.Mutex
	held map[string]*upload
}

func (u *uploads) put(up *upload, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.held == nil {
		u.held = map[string]*upload{}
	}
	for id, o := range u.held {
		if o.session == up.session || now.After(o.expires) {
			o.remove()
			delete(u.held, id)
		}
	}
	u.held[up.id] = up
}

// get returns the session's waiting upload id; take also removes it from the list (the caller removes
// its file when done).
func (u *uploads) get(id, session string, now time.Time, take bool) *upload {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, o := range u.held {
		if now.After(o.expires) {
			o.remove()
			delete(u.held, k)
		}
	}
	up := u.held[id]
	if up == nil || up.session != session {
		return nil
	}
	if take {
		delete(u.held, id)
	}
	return up
}

// close removes every waiting upload's file.
func (u *uploads) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id, o := range u.held {
		o.remove()
		delete(u.held, id)
	}
}

// remove removes the upload's folder; one that cannot be removed is left to the next start's sweep.
func (up *upload) remove() {
	if up.dir != "" {
		_ = os.RemoveAll(up.dir)
	}
	if up.hold != nil {
		_ = up.hold.Close() // closing lets go of the lock
	}
}

// sweepUploads removes every upload folder of this OS user under base that no process holds: what a
// process that died (killed, crashed, the machine off) left between an upload and its import. A folder
// another box serve holds is its waiting upload, and stays; another user's is never touched.
func sweepUploads(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return // nothing to sweep; an upload that cannot be kept there says so itself
	}
	for _, e := range ents {
		made := strings.HasPrefix(e.Name(), newUploadPrefix)
		if !e.IsDir() || !strings.HasPrefix(e.Name(), uploadPrefix) && !made { // a link is not a folder here
			continue
		}
		dir := filepath.Join(base, e.Name())
		var st unix.Stat_t
		if unix.Lstat(dir, &st) != nil || st.Uid != uint32(os.Getuid()) || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		// A folder still being made is another process's for a moment: only an old one is left over. Its
		// age is the file system's, on the wall clock.
		if made && time.Since(time.Unix(st.Mtim.Unix())) < time.Hour {
			continue
		}
		if f, ok := lockDir(dir, unix.LOCK_EX); ok {
			_ = os.RemoveAll(dir)
			_ = f.Close()
		}
	}
}

// lockDir opens dir and takes the lock how (shared while an upload waits, exclusive to sweep it) if
// nobody holds a conflicting one; the caller closes the file to let go.
func lockDir(dir string, how int) (*os.File, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	if unix.Flock(int(f.Fd()), how|unix.LOCK_NB) != nil {
		_ = f.Close()
		return nil, false
	}
	return f, true
}

// uploadPrefix begins the name of every upload's folder; newUploadPrefix the name of one being made,
// before its lock is taken (a crash then leaves it empty, and a sweep an hour later removes it).
const (
	uploadPrefix    = "box-upload-"
	newUploadPrefix = ".box-upload-new-"
)

// Close removes the uploads still waiting for an import; box serve calls it when it stops.
func (w *Web) Close() { w.uploads.close() }

// uploadBase is where uploads wait: Config.UploadDir, else the system's temp folder.
func (w *Web) uploadBase() string {
	if w.cfg.UploadDir != "" {
		return w.cfg.UploadDir
	}
	return os.TempDir()
}

func (w *Web) maxUpload() int64 {
	if w.cfg.MaxUpload > 0 {
		return w.cfg.MaxUpload
	}
	return DefaultMaxUpload
}

// limitBodies bounds every request body at 1 MiB, and the import upload at its own limit.
func (w *Web) limitBodies(next http.Handler) http.Handler {
	small := http.MaxBytesHandler(next, 1<<20)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == importUploadPath {
			r.Body = http.MaxBytesReader(rw, r.Body, w.maxUpload()+64<<10)
			next.ServeHTTP(rw, r)
			return
		}
		small.ServeHTTP(rw, r)
	})
}

// exportKinds are the export buttons, as exports.Kinds names them (the export itself is Config.Export).
var exportKinds = []string{"markdown", "server-memory", "json"}

// kindView is one kind the owner can pick.
type kindView struct{ Value, Label string }

var importKinds = []kindView{
	{imports.ChatGPT, "ChatGPT data export (.zip)"},
	{imports.Claude, "Claude data export (.zip)"},
	{imports.ServerMemory, "MCP memory server (memory.jsonl)"},
	{imports.Mem0, "mem0 or OpenMemory (.json or .zip)"},
	{imports.BasicMemory, "basic-memory project (.zip of the folder)"},
	{imports.Markdown, "Obsidian vault or Markdown notes (.zip of the folder)"},
}

// uploadView is a waiting upload as the page shows it.
type uploadView struct {
	ID, Name, Kind string
	Result         memory.ImportResult
	MoreRefused    int // refused places past the ones listed
}

func (w *Web) importsPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	q := r.URL.Query()
	data := &importsData{frame: frame{Tab: "settings"}, Kinds: importKinds, Limit: size(w.maxUpload()), Max: w.maxUpload(),
		Exports: exportKinds, Entry: q.Get("entry")}
	if up := w.uploads.get(q.Get("upload"), ss.hash, w.now(), false); up != nil {
		data.Upload = &uploadView{ID: up.id, Name: up.name, Kind: up.kind, Result: up.res, MoreRefused: up.res.Refused - len(up.res.Places)}
	}
	w.render(rw, r, ss, "imports", data)
}

// importUpload reads the form as a stream: the CSRF token first (nothing else is read without it),
// then the kind, then the file, written to a private temp folder outside the box; then the dry run.
func (w *Web) importUpload(rw http.ResponseWriter, r *http.Request, ss *session) {
	up, err := w.receive(r, ss)
	if err != nil {
		if errs.KindOf(err) == errs.Forbidden {
			w.fail(rw, r, err)
			return
		}
		w.backErr(rw, r, "/settings/import", err)
		return
	}
	if up.kind == "" {
		up.kind = imports.Detect(up.path)
	}
	if up.kind == "" {
		up.remove()
		back(rw, r, "/settings/import", "The box cannot tell what made "+up.name+"; choose the kind of file and upload it again.")
		return
	}
	res, err := w.importRun(r, up, true)
	if err != nil {
		up.remove()
		w.backErr(rw, r, "/settings/import", err)
		return
	}
	up.res = res
	w.uploads.put(up, w.now())
	http.Redirect(rw, r, "/settings/import?upload="+url.QueryEscape(up.id)+"#dryrun", http.StatusSeeOther)
}

// receive streams the upload form into a new upload; on an error nothing of it is left on disk.
func (w *Web) receive(r *http.Request, ss *session) (*upload, error) {
	const op = "web.import"
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, errs.E(op, errs.Usage, "Send the file with the upload form in Settings → Bring your memories.")
	}
	field := func(name string, max int64) (string, error) {
		p, err := mr.NextPart()
		if err != nil || p.FormName() != name {
			return "", errs.E(op, errs.Forbidden, "This form is out of date (its safety token is missing or wrong); reload the page and try again.")
		}
		b, err := io.ReadAll(io.LimitReader(p, max))
		return string(b), err
	}
	tok, err := field("csrf", 256)
	if err != nil || !ss.checkCSRF(tok) {
		return nil, errs.E(op, errs.Forbidden, "This form is out of date (its safety token is missing or wrong); reload the page and try again.")
	}
	kind, err := field("kind", 64)
	if err != nil {
		return nil, errs.E(op, errs.Usage, "Choose the kind of file, then upload it.")
	}
	if kind == "detect" {
		kind = ""
	}
	if kind != "" && !known(kind) {
		return nil, errs.E(op, errs.Usage, "%q is not a kind of import; choose one from the list.", kind)
	}
	p, err := mr.NextPart()
	if err != nil || p.FormName() != "file" || p.FileName() == "" {
		return nil, errs.E(op, errs.Usage, "Choose a file to upload.")
	}
	up := &upload{id: randomID(), session: ss.hash, name: uploadName(p.FileName()), kind: kind, expires: w.now().Add(uploadWait)}
	if err := w.save(up, p); err != nil {
		up.remove()
		return nil, err
	}
	return up, nil
}

// save writes the file part to a private folder of its own, counting it against the limit.
func (w *Web) save(up *upload, p *multipart.Part) error {
	const op = "web.import"
	base := w.uploadBase()
	if inside(w.cfg.Box.Root, base) {
		return errs.E(op, errs.Invalid, "Uploads would wait inside the box; box serve needs a temp folder outside it.")
	}
	// The folder is made under a name the sweep passes over, locked, and only then named as an upload's,
	// so another process's start never takes a folder between its making and its lock.
	tmp, err := os.MkdirTemp(base, newUploadPrefix+"*")
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "The upload cannot be kept for its import")
	}
	hold, ok := lockDir(tmp, unix.LOCK_SH)
	if !ok {
		_ = os.Remove(tmp)
		return errs.E(op, errs.Other, "The upload cannot be kept for its import: its folder could not be locked; try again.")
	}
	up.hold = hold
	dir := filepath.Join(base, uploadPrefix+strings.TrimPrefix(filepath.Base(tmp), newUploadPrefix))
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Remove(tmp)
		return errs.Wrap(op, errs.Other, err, "The upload cannot be kept for its import")
	}
	up.dir, up.path = dir, filepath.Join(dir, up.name)
	f, err := os.OpenFile(up.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "The upload cannot be kept for its import")
	}
	max := w.maxUpload()
	n, err := io.Copy(f, io.LimitReader(p, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var tooBig *http.MaxBytesError
	if n > max || errors.As(err, &tooBig) {
		return errs.E(op, errs.Limited, "%s is bigger than the %s an upload may be; nothing was imported. On the box's own computer, `box import KIND PATH` takes any size.", up.name, size(max))
	}
	if err != nil {
		return errs.Wrap(op, errs.Invalid, err, "The upload did not arrive whole; nothing was imported. Try again")
	}
	if n == 0 {
		return errs.E(op, errs.Invalid, "%s is empty; nothing was imported.", up.name)
	}
	return nil
}

// importRun reads a waiting upload as its kind: a dry run, or the import itself.
func (w *Web) importRun(r *http.Request, up *upload, dry bool) (memory.ImportResult, error) {
	var skipped []imports.Skip
	src, err := imports.Open(up.kind, up.path, imports.Options{Zone: w.now().Location(), Skipped: func(s imports.Skip) { skipped = append(skipped, s) }})
	if err != nil {
		return memory.ImportResult{}, err
	}
	res, err := w.cfg.Memory.Import(r.Context(), ownerActor, memory.ImportInput{Kind: up.kind, Source: up.name, Path: src.Path, Folder: src.Folder, DryRun: dry, Read: src.Read})
	if err != nil {
		return res, err
	}
	res.Skipped = append(skipped, res.Skipped...)
	return res, nil
}

// importDo imports the session's waiting upload as one change, then removes its file.
func (w *Web) importDo(rw http.ResponseWriter, r *http.Request, ss *session) {
	up := w.uploads.get(r.PostFormValue("upload"), ss.hash, w.now(), true)
	if up == nil {
		back(rw, r, "/settings/import", "That upload is no longer waiting (it was imported, cancelled, or waited over 30 minutes); upload the file again.")
		return
	}
	defer up.remove()
	res, err := w.importRun(r, up, false)
	if err != nil {
		w.backErr(rw, r, "/settings/import", err)
		return
	}
	to := "/settings/import?note=" + url.QueryEscape(res.Text)
	if res.Entry != "" {
		to += "&entry=" + url.QueryEscape(res.Entry)
	}
	http.Redirect(rw, r, to, http.StatusSeeOther)
}

func (w *Web) importCancel(rw http.ResponseWriter, r *http.Request, ss *session) {
	up := w.uploads.get(r.PostFormValue("upload"), ss.hash, w.now(), true)
	if up == nil {
		back(rw, r, "/settings/import", "Nothing was waiting to be imported.")
		return
	}
	up.remove()
	back(rw, r, "/settings/import", "Cancelled; the uploaded file is gone and nothing was imported.")
}

// export streams the memory as a download: markdown as a zip, server-memory as JSONL, json. The whole
// memory leaves the box, so it needs a passkey assertion made for it, not the session alone.
func (w *Web) export(rw http.ResponseWriter, r *http.Request, ss *session) {
	kind := r.PostFormValue("kind")
	stamp := w.now().Format("2006-01-02")
	var name, ctype string
	switch kind {
	case "markdown":
		name, ctype = "box-"+stamp+".zip", "application/zip"
	case "server-memory":
		name, ctype = "memory-"+stamp+".jsonl", "application/x-ndjson"
	case "json":
		name, ctype = "box-"+stamp+".json", "application/json"
	default:
		w.backErr(rw, r, "/settings/import", errs.E("web.export", errs.Usage, "%q is not a kind of export; use one of %s.", kind, strings.Join(exportKinds, ", ")))
		return
	}
	if w.cfg.Export == nil {
		w.backErr(rw, r, "/settings/import", errs.E("web.export", errs.Other, "This box serves no exports."))
		return
	}
	if err := w.formConfirmed(r, ss, "export", "Downloading your memory"); err != nil {
		w.backErr(rw, r, "/settings/import", err)
		return
	}
	h := rw.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store")
	if err := w.cfg.Export(r.Context(), kind, name, rw); err != nil {
		// The download has begun; the browser sees it cut short, and the log says why.
		w.log.Error("web: export", "kind", kind, "err", err)
	}
}

// size says a byte count the way the page does: MiB, or KiB under one MiB.
func size(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

func known(kind string) bool {
	for _, k := range imports.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand never fails on a supported system
	return hex.EncodeToString(b)
}

// uploadName is the uploaded file's base name, made safe to be a file name here and a name in the
// import's provenance: printable, no separators, at most 100 characters.
func uploadName(s string) string {
	s = s[strings.LastIndexAny(s, `/\`)+1:]
	var b strings.Builder
	for _, c := range s {
		if unicode.IsPrint(c) && c != ':' && b.Len() < 100 {
			b.WriteRune(c)
		}
	}
	out := strings.TrimLeft(strings.TrimSpace(b.String()), ".")
	if out == "" {
		return "upload"
	}
	return out
}

// inside reports whether dir is the box's root or inside it.
func inside(root, dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	rel, err := filepath.Rel(root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
