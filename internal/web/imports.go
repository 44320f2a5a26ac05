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
)

// Settings → Bring your memories (docs/IMPORTS.md, "In the web UI"): the owner uploads a file, sees the
// dry run, and imports it as one change with its Undo; the export buttons download the memory. An
// upload is untrusted input: its body is streamed to a private temp folder outside the box tree, under
// a size limit, read by the same readers and limits as `box import`, and removed after the import,
// a cancel, or when it has waited too long.

// DefaultMaxUpload bounds one upload when Config.MaxUpload is 0.
const DefaultMaxUpload = 512 << 20

// uploadWait is how long an uploaded file waits for the owner to import it after its dry run.
const uploadWait = 30 * time.Minute

// importPath is the one request whose body may be bigger than the web UI's 1 MiB.
const importUploadPath = "/settings/import/upload"

// upload is a file waiting between its dry run and its import.
type upload struct {
	id      string
	session string // the session that uploaded it: no other may import it
	dir     string // its private folder, removed with it
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

func (up *upload) remove() { _ = os.RemoveAll(up.dir) } // a temp folder; a failure leaves it to the system's cleaner

// Close removes the uploads still waiting for an import; box serve calls it when it stops.
func (w *Web) Close() { w.uploads.close() }

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
	base := w.cfg.UploadDir
	if base == "" {
		base = os.TempDir()
	}
	if inside(w.cfg.Box.Root, base) {
		return errs.E(op, errs.Invalid, "Uploads would wait inside the box; box serve needs a temp folder outside it.")
	}
	dir, err := os.MkdirTemp(base, "box-upload-*")
	if err != nil {
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
