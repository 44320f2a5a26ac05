package web_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/exports"
	"github.com/boxmem/box/internal/providertest"
	"github.com/boxmem/box/internal/web"
)

// importFx is the web UI of f's box again with a small upload limit and its own upload folder, so a
// test sees every file an upload leaves behind. f's session works on it (the same state, the same box).
type importFx struct {
	*fx
	dir  string
	base string
	max  int64
}

func newImportFx(t *testing.T, max int64) *importFx {
	return serveImports(t, newFx(t), t.TempDir(), max)
}

// serveImports serves another web UI over f's box, as another start of box serve would, with uploads
// waiting in dir.
func serveImports(t *testing.T, f *fx, dir string, max int64) *importFx {
	t.Helper()
	a := f.a
	w, err := web.New(web.Config{Box: a.Box, State: a.State, Keys: a.Keys, Todos: a.Todos, Gate: a.Gate, Memory: a.Memory, Brain: a.Brain, Builds: a.Builds, Routines: a.Routines,
		Erase: a.Erase, Freeze: a.Freeze, Now: f.clock.Now, UploadDir: dir, MaxUpload: max,
		Export: func(ctx context.Context, kind, name string, w io.Writer) error {
			_, err := exports.Stream(ctx, kind, a.Box.Root, name, w, exports.Options{Now: f.clock.Now})
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(func() { srv.Close(); w.Close() })
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	return &importFx{fx: f, dir: dir, base: "http://localhost:" + port, max: max}
}

// part is one field of the upload form, in the order sent.
type part struct{ name, file, data string }

// upload posts the multipart form as a browser would (same origin) and returns the answer.
func (f *importFx) upload(parts ...part) *http.Response {
	f.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.file != "" {
			w, err = mw.CreateFormFile(p.name, p.file)
		} else {
			w, err = mw.CreateFormField(p.name)
		}
		if err != nil {
			f.t.Fatal(err)
		}
		io.WriteString(w, p.data)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", f.base+"/settings/import/upload", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", f.base)
	res, err := f.c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func (f *importFx) page(path string) string {
	f.t.Helper()
	res, err := f.c.Get(f.base + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func (f *importFx) post(path string, v url.Values) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.base)
	res, err := f.c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// note is the sentence a redirect carries back to the page.
func note(t *testing.T, res *http.Response) string {
	t.Helper()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d, want a redirect back", res.StatusCode)
	}
	u, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("note")
}

// left lists what uploads left in the upload folder.
func (f *importFx) left() []string {
	f.t.Helper()
	var out []string
	filepath.Walk(f.dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != f.dir {
			out = append(out, strings.TrimPrefix(p, f.dir))
		}
		return nil
	})
	return out
}

func (f *importFx) head() string {
	f.t.Helper()
	es, err := f.b.Diary(context.Background(), 1, nil)
	if err != nil || len(es) == 0 {
		f.t.Fatalf("diary: %v", err)
	}
	return es[0].ID
}

const graphJSONL = `{"type":"entity","name":"Leo","entityType":"person","observations":["Swims on Thursdays","Likes dinosaurs","My bank password is Tr0ub4dor&3-horse"]}
{"type":"entity","name":"Mira","entityType":"person","observations":["Works night shifts"]}
{"type":"relation","from":"Leo","to":"Mira","relationType":"son_of"}
`

// The whole path over HTTP: upload (the kind told from the file) → dry run, nothing written, the secret
// counted by place → import: one change, the upload gone → undo.
func TestImportUploadDryRunImportUndo(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	before := f.head()
	res := f.upload(part{"csrf", "", csrf}, part{"kind", "", "detect"}, part{"file", "memory.jsonl", graphJSONL})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/settings/import?upload=") {
		t.Fatalf("upload: %d %s", res.StatusCode, loc)
	}
	if f.head() != before {
		t.Fatal("a dry run wrote to the box")
	}
	if l := f.left(); len(l) != 2 {
		t.Fatalf("the waiting upload should be one private folder and its file: %v", l)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(loc, "/settings/import?upload="), "#dryrun")
	page := f.page("/settings/import?upload=" + id)
	for _, want := range []string{"Would import from memory.jsonl: 4 lines for the inbox", "Read as: server-memory", "1 left out", "memory.jsonl line 1"} {
		if !strings.Contains(page, want) {
			t.Errorf("the dry run lacks %q", want)
		}
	}
	if strings.Contains(page, "Tr0ub4dor") {
		t.Fatal("the dry run shows a refused secret's text")
	}
	// Another signed-in browser (its own session and token) cannot import or cancel this upload.
	other := newClient()
	_, begin := f.call(other, "/auth/login/begin", map[string]any{}, "")
	if st, out := f.call(other, "/auth/login/finish", map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Get(raw(begin["options"]))}, ""); st != 200 {
		t.Fatalf("second sign-in: %d %v", st, out)
	}
	for _, action := range []string{"run", "cancel"} {
		req, _ := http.NewRequest("POST", f.base+"/settings/import/"+action, strings.NewReader(url.Values{"csrf": {f.fx.csrf(other)}, "upload": {id}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", f.base)
		res, err := other.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if s := note(t, res); action == "run" && !strings.Contains(s, "no longer waiting") {
			t.Fatalf("another session imported the upload: %q", s)
		}
	}
	if f.head() != before || len(f.left()) != 2 {
		t.Fatal("another session touched the waiting upload")
	}
	res = f.post("/settings/import/run", url.Values{"csrf": {csrf}, "upload": {id}})
	res.Body.Close()
	said := note(t, res)
	entry, _ := url.Parse(res.Header.Get("Location"))
	if !strings.Contains(said, "Imported from memory.jsonl (server-memory): 4 lines") || entry.Query().Get("entry") == "" {
		t.Fatalf("import: %q %s", said, res.Header.Get("Location"))
	}
	if l := f.left(); len(l) != 0 {
		t.Errorf("the upload stayed after its import: %v", l)
	}
	es, _ := f.b.Diary(context.Background(), 5, func(e diary.Entry) bool { return e.Op == "import" })
	if len(es) != 1 || es[0].ID != entry.Query().Get("entry") || strings.Contains(es[0].Reason, "Tr0ub4dor") {
		t.Fatalf("one diary entry for the import: %+v", es)
	}
	if n := len(mustLines(t, f.fx, "leo swims thursdays")); n != 1 {
		t.Fatalf("imported lines: %d", n)
	}
	if n := len(mustLines(t, f.fx, "password")); n != 0 {
		t.Fatal("a secret came in")
	}
	page = f.page(entry.RequestURI())
	if !strings.Contains(page, `id="undo-import-btn"`) {
		t.Fatal("the page after an import shows no Undo")
	}
	// The same id again: nothing waits any more.
	res = f.post("/settings/import/run", url.Values{"csrf": {csrf}, "upload": {id}})
	res.Body.Close()
	if s := note(t, res); !strings.Contains(s, "no longer waiting") {
		t.Errorf("importing twice: %q", s)
	}
	res = f.post("/undo", url.Values{"csrf": {csrf}, "entry": {entry.Query().Get("entry")}, "back": {"/settings/import"}})
	res.Body.Close()
	if res.Header.Get("Location")[:17] != "/settings/import?" || len(mustLines(t, f.fx, "leo swims thursdays")) != 0 {
		t.Fatalf("undo: %s, lines left %d", res.Header.Get("Location"), len(mustLines(t, f.fx, "leo swims thursdays")))
	}
	// Cancel drops a waiting upload.
	res = f.upload(part{"csrf", "", csrf}, part{"kind", "", "server-memory"}, part{"file", "memory.jsonl", graphJSONL})
	id = strings.TrimSuffix(strings.TrimPrefix(res.Header.Get("Location"), "/settings/import?upload="), "#dryrun")
	res = f.post("/settings/import/cancel", url.Values{"csrf": {csrf}, "upload": {id}})
	res.Body.Close()
	if s := note(t, res); !strings.Contains(s, "Cancelled") || len(f.left()) != 0 {
		t.Errorf("cancel: %q, left %v", s, f.left())
	}
}

// What a process that died between an upload and its import left in the upload folder is gone at the
// next start; an upload another box serve holds for its owner stays, and still imports.
func TestUploadsADeadProcessLeftGoAtTheNextStart(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	res := f.upload(part{"csrf", "", csrf}, part{"kind", "", "server-memory"}, part{"file", "memory.jsonl", graphJSONL})
	id := strings.TrimSuffix(strings.TrimPrefix(res.Header.Get("Location"), "/settings/import?upload="), "#dryrun")
	if l := f.left(); len(l) != 2 {
		t.Fatalf("the waiting upload is not one folder and its file: %v (%s)", l, res.Header.Get("Location"))
	}
	// What a process killed mid-upload leaves: its folder and part of its file, held by nobody.
	dead := filepath.Join(f.dir, "box-upload-4711")
	if err := os.MkdirAll(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "conversations.zip"), []byte(graphJSONL[:40]), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not an upload's folder: left alone. A folder being made (not locked yet) is left alone for an hour
	// (the file system's age), then it is a leftover too.
	other := filepath.Join(f.dir, "photos")
	making, stale := filepath.Join(f.dir, ".box-upload-new-1"), filepath.Join(f.dir, ".box-upload-new-2")
	for _, d := range []string{other, making, stale} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	serveImports(t, f.fx, f.dir, 1<<20) // the next start
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("what the dead process left is still there: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a folder left half made two hours ago is still there: %v", err)
	}
	for _, d := range []string{other, making} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("the sweep took %s: %v", filepath.Base(d), err)
		}
	}
	if err := os.Remove(making); err != nil {
		t.Fatal(err)
	}
	if l := f.left(); len(l) != 3 {
		t.Fatalf("the next start took an upload a live process holds: %v", l)
	}
	res = f.post("/settings/import/run", url.Values{"csrf": {csrf}, "upload": {id}})
	res.Body.Close()
	if s := note(t, res); !strings.Contains(s, "Imported from memory.jsonl") || len(f.left()) != 1 {
		t.Fatalf("the held upload after the next start: %q, left %v", s, f.left())
	}
}

// Every refused upload says why, writes nothing to the box and leaves nothing on disk: too big, the
// wrong kind, a kind the box does not know or cannot tell, a zip bomb, the CSRF token missing or after
// the file, another site, no session.
func TestImportUploadRefusals(t *testing.T) {
	f := newImportFx(t, 64<<10)
	csrf := f.signedIn()
	before := f.head()
	bomb := zipOf(t, map[string]string{"notes/a.md": strings.Repeat(" ", 16<<20)})
	if len(bomb) > 64<<10 {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	for _, c := range []struct {
		name  string
		parts []part
		want  string
	}{
		{"oversize", []part{{"csrf", "", csrf}, {"kind", "", "mem0"}, {"file", "big.json", "[" + strings.Repeat(" ", 2<<20) + "]"}}, "bigger than the 64 KiB an upload may be"},
		{"wrong kind", []part{{"csrf", "", csrf}, {"kind", "", "chatgpt"}, {"file", "memory.jsonl", graphJSONL}}, "This does not look like a chatgpt export"},
		{"unknown kind", []part{{"csrf", "", csrf}, {"kind", "", "evernote"}, {"file", "memory.jsonl", graphJSONL}}, `"evernote" is not a kind of import`},
		{"cannot tell", []part{{"csrf", "", csrf}, {"kind", "", "detect"}, {"file", "notes.txt", "just words"}}, "cannot tell what made notes.txt"},
		{"zip bomb", []part{{"csrf", "", csrf}, {"kind", "", "markdown"}, {"file", "vault.zip", string(bomb)}}, "zip bomb"},
		{"not a zip", []part{{"csrf", "", csrf}, {"kind", "", "claude"}, {"file", "export.zip", "PK\x03\x04 not really"}}, "neither a folder nor a zip"},
		{"empty", []part{{"csrf", "", csrf}, {"kind", "", "mem0"}, {"file", "m.json", ""}}, "is empty"},
		{"no file", []part{{"csrf", "", csrf}, {"kind", "", "mem0"}}, "Choose a file"},
	} {
		if s := note(t, f.upload(c.parts...)); !strings.Contains(s, c.want) {
			t.Errorf("%s: %q, want %q", c.name, s, c.want)
		}
		if l := f.left(); len(l) != 0 {
			t.Errorf("%s left %v", c.name, l)
		}
	}
	for name, parts := range map[string][]part{
		"no token":         {{"kind", "", "mem0"}, {"file", "m.json", `[{"id":"1","memory":"x"}]`}},
		"wrong token":      {{"csrf", "", "nope"}, {"kind", "", "mem0"}, {"file", "m.json", `[{"id":"1","memory":"x"}]`}},
		"token after file": {{"file", "m.json", `[{"id":"1","memory":"x"}]`}, {"csrf", "", csrf}},
	} {
		if res := f.upload(parts...); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d", name, res.StatusCode)
		}
		if l := f.left(); len(l) != 0 {
			t.Errorf("%s left %v", name, l)
		}
	}
	// Another site, and no session.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("csrf", csrf)
	mw.Close()
	req, _ := http.NewRequest("POST", f.base+"/settings/import/upload", bytes.NewReader(buf.Bytes()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", "https://evil.example")
	if res, err := f.c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("another site: %v %v", res.StatusCode, err)
	}
	req, _ = http.NewRequest("POST", f.base+"/settings/import/upload", bytes.NewReader(buf.Bytes()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if res, err := newClient().Do(req); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no session: %v %v", res.StatusCode, err)
	}
	if f.head() != before || len(f.left()) != 0 {
		t.Fatal("a refused upload wrote to the box or left a file")
	}
}

// A zipped vault with an entry named to climb out of it: the entry is listed as skipped and never
// written, the rest comes in under /_content/imports/<the zip's name>/.
func TestImportUploadZipTraversal(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	z := zipOf(t, map[string]string{"notes/ok.md": "# Fine\n\nA note about [[Leo]].\n", "Welcome.md": "# Welcome\n", "../../evil.md": "# evil\n", "/abs.md": "# abs\n", "notes/../../../up.md": "# up\n"})
	res := f.upload(part{"csrf", "", csrf}, part{"kind", "", "markdown"}, part{"file", "My Notes.zip", string(z)})
	id := strings.TrimSuffix(strings.TrimPrefix(res.Header.Get("Location"), "/settings/import?upload="), "#dryrun")
	page := f.page("/settings/import?upload=" + id)
	if !strings.Contains(page, "3 skipped") || !strings.Contains(page, "never read") {
		t.Fatalf("the dry run should list the three names that leave the zip:\n%s", page)
	}
	res = f.post("/settings/import/run", url.Values{"csrf": {csrf}, "upload": {id}})
	res.Body.Close()
	if s := note(t, res); !strings.Contains(s, "2 documents under /_content/imports/my-notes/") {
		t.Fatalf("import: %q", s)
	}
	root := f.b.Root
	if _, err := os.Stat(filepath.Join(root, "_content", "imports", "my-notes", "notes", "ok.md")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Dir(root), filepath.Dir(filepath.Dir(root)), f.dir, filepath.Dir(f.dir)} {
		for _, n := range []string{"evil.md", "up.md", "abs.md"} {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				t.Fatalf("%s was written to %s", n, d)
			}
		}
	}
}

// withPasskey adds to a form the passkey assertion the page's script puts in it for purpose.
func (f *importFx) withPasskey(v url.Values, csrf, purpose string) url.Values {
	f.t.Helper()
	return f.withPasskeyFor(v, csrf, purpose, "")
}

// withPasskeyFor is withPasskey for a check bound to one change too (a switch: "share=just-do-it").
func (f *importFx) withPasskeyFor(v url.Values, csrf, purpose, bound string) url.Values {
	f.t.Helper()
	body, _ := json.Marshal(map[string]string{"purpose": purpose, "card": bound})
	req, _ := http.NewRequest("POST", f.base+"/auth/confirm/begin", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.base)
	req.Header.Set("X-CSRF-Token", csrf)
	res, err := f.c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var begin map[string]any
	if err := json.NewDecoder(res.Body).Decode(&begin); err != nil || res.StatusCode != 200 {
		f.t.Fatalf("confirm begin: %d %v", res.StatusCode, err)
	}
	v.Set("ceremony", begin["ceremony"].(string))
	f.key.UseOrigin(f.base) // the passkey was made on the first server's port; a browser here answers from this one
	v.Set("credential", string(raw(f.key.Get(raw(begin["options"])))))
	return v
}

// The export buttons download the memory: markdown as a zip of /_content/, server-memory as JSONL, json;
// each needs the session's token and a passkey assertion made for it.
func TestExportDownloads(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	remember(t, f.m, "owner", "Leo swims on Thursdays.")
	get := func(kind string) (*http.Response, []byte) {
		res := f.post("/settings/export", f.withPasskey(url.Values{"csrf": {csrf}, "kind": {kind}}, csrf, "export"))
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, body := get("markdown")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/zip" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), `attachment; filename="box-`) {
		t.Fatalf("markdown: %d %v", res.StatusCode, res.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, zf := range zr.File {
		names[zf.Name] = true
		if !strings.HasPrefix(zf.Name, "_content/") {
			t.Errorf("the zip holds %s", zf.Name)
		}
	}
	if !names["_content/memory/MEMORY.md"] {
		t.Errorf("the zip lacks the router: %v", names)
	}
	res, body = get("server-memory")
	sc := bufio.NewScanner(bytes.NewReader(body))
	lines := 0
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil || (v["type"] != "entity" && v["type"] != "relation") {
			t.Fatalf("server-memory line %q: %v", sc.Text(), err)
		}
		lines++
	}
	if res.StatusCode != 200 || lines == 0 || !strings.Contains(string(body), "Leo swims on Thursdays.") {
		t.Fatalf("server-memory: %d, %d lines", res.StatusCode, lines)
	}
	res, body = get("json")
	var doc map[string]any
	if res.StatusCode != 200 || json.Unmarshal(body, &doc) != nil || doc["format"] != "box-export" {
		t.Fatalf("json: %d %.200s", res.StatusCode, body)
	}
	res = f.post("/settings/export", url.Values{"kind": {"json"}})
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("an export without the token: %d", res.StatusCode)
	}
	res, _ = get("pdf")
	if s := note(t, res); !strings.Contains(s, `"pdf" is not a kind of export`) {
		t.Errorf("an unknown export: %q", s)
	}
}

// A stolen session cookie (with the CSRF token any signed-in page shows, on any port of localhost) does
// not download the memory nor move the brain: each needs an assertion of the owner's passkey made for
// it, used once.
func TestExportAndBrainNeedAFreshAssertion(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	remember(t, f.m, "owner", "Leo swims on Thursdays.")
	for name, v := range map[string]url.Values{
		"no assertion":        {"csrf": {csrf}, "kind": {"json"}},
		"made for erase":      f.withPasskey(url.Values{"csrf": {csrf}, "kind": {"json"}}, csrf, "erase"),
		"a forged credential": {"csrf": {csrf}, "kind": {"json"}, "ceremony": {"x"}, "credential": {"{}"}},
	} {
		res := f.post("/settings/export", v)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || strings.Contains(string(b), "Leo swims") {
			t.Errorf("%s: %d %.100s", name, res.StatusCode, b)
		}
		if name == "no assertion" && !strings.Contains(note(t, res), "Downloading your memory needs your passkey") {
			t.Errorf("%s: %q", name, note(t, res))
		}
	}
	// One assertion is one download.
	once := f.withPasskey(url.Values{"csrf": {csrf}, "kind": {"json"}}, csrf, "export")
	for i, want := range []int{200, http.StatusSeeOther} {
		res := f.post("/settings/export", once)
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("download %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}

	const key = "sk-test-brain-0000000000000000b3d5"
	srv := providertest.OpenAI(t, key)
	set := url.Values{"csrf": {csrf}, "provider": {"openai"}, "base_url": {srv.URL}, "model": {"model-a"}, "key": {key}}
	res := f.post("/settings/brain", set)
	res.Body.Close()
	if s := note(t, res); !strings.Contains(s, "Changing the brain needs your passkey") || len(srv.Headers()) != 0 {
		t.Fatalf("a brain set without a passkey: %q, the server heard %d", s, len(srv.Headers()))
	}
	res = f.post("/settings/brain", f.withPasskey(set, csrf, "brain-set"))
	res.Body.Close()
	if s := note(t, res); !strings.Contains(s, "The brain is set") {
		t.Fatalf("a brain set with the passkey: %q", s)
	}
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An erase removes the uploads still waiting for their import: whole exports of the owner's memories,
// kept outside the box (docs/GATE.md, "Erase").
func TestEraseRemovesWaitingUploads(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	res := f.upload(part{"csrf", "", csrf}, part{"kind", "", "detect"}, part{"file", "memory.jsonl", graphJSONL})
	if res.StatusCode != http.StatusSeeOther || len(f.left()) != 2 {
		t.Fatalf("upload: %d, left %v", res.StatusCode, f.left())
	}
	on := *f.fx // the erase goes to the web UI that holds the upload
	on.base, on.key = f.base, f.key.At(f.base)
	body := on.assert(csrf, "erase", "")
	body["phrase"] = "erase my box"
	if st, out := on.call(on.c, "/settings/erase", body, csrf); st != 200 {
		t.Fatalf("erase: %d %v", st, out)
	}
	if l := f.left(); len(l) != 0 {
		t.Fatalf("the erase left the waiting upload: %v", l)
	}
}
