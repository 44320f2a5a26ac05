package oauth_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/oauth"
	"github.com/boxmem/box/internal/web"
)

// access returns the diary lines of the access switch, oldest first.
func (f *fx) access() []diary.Entry {
	f.t.Helper()
	es, err := diary.Recent(f.root, 0, func(e diary.Entry) bool { return e.Switch == "access" })
	if err != nil {
		f.t.Fatal(err)
	}
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	return es
}

// csrf is the signed-in owner's form token, from Settings.
func (f *fx) csrf() string {
	f.t.Helper()
	res, err := f.c.Get(f.base + "/settings")
	if err != nil {
		f.t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`).FindSubmatch(page)
	if res.StatusCode != 200 || m == nil {
		f.t.Fatalf("settings: %d, no csrf token", res.StatusCode)
	}
	return string(m[1])
}

// disconnect posts Settings → Other assistants → Disconnect as the signed-in owner and returns the note shown.
func (f *fx) disconnect(id string) string {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.base+"/settings/connections/"+id+"/disconnect", strings.NewReader(url.Values{"csrf": {f.csrf()}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.base)
	res, err := f.c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || loc.Path != "/settings" {
		f.t.Fatalf("disconnect: %d %v", res.StatusCode, loc)
	}
	return loc.Query().Get("note")
}

// A new connection and a disconnect are access decisions: each is one diary line and one commit, by the
// owner on the web, naming the client and its host and never a token or a code.
func TestConnectAndDisconnectAreInTheDiary(t *testing.T) {
	f := newFx(t)
	f.owner()
	ctx := context.Background()
	fl := f.newFlow(loop)
	code := f.code(fl, "memory.read memory.write", keys.Caps{Memory: true})
	es := f.access()
	if len(es) != 1 {
		t.Fatalf("after consent, access lines: %+v", es)
	}
	want := "owner let Test client (127.0.0.1:9) read memory and save to memory"
	if e := es[0]; e.Op != "connect" || e.Actor != "owner" || e.Via != "web" || e.Summary != want || len(e.Paths) != 0 {
		t.Fatalf("connect line: %+v", e)
	}
	st, tk := f.exchange(fl, code)
	if st != 200 {
		t.Fatalf("token: %d %v", st, tk)
	}
	list, _ := f.grants.List(ctx)
	if note := f.disconnect(list[0].ID); note != "Test client is disconnected; its next call is refused." {
		t.Fatalf("note: %q", note)
	}
	if st, _ := f.mcpStatus(tk["access_token"].(string)); st != 401 {
		t.Fatalf("after disconnect /mcp answers %d", st)
	}
	if note := f.disconnect(list[0].ID); !strings.Contains(note, "already disconnected") {
		t.Fatalf("second disconnect: %q", note)
	}
	es = f.access()
	if len(es) != 2 {
		t.Fatalf("after disconnecting twice, access lines: %+v", es)
	}
	if e := es[1]; e.Op != "disconnect" || e.Actor != "owner" || e.Via != "web" || e.Summary != "owner disconnected Test client (127.0.0.1:9)" {
		t.Fatalf("disconnect line: %+v", e)
	}
	// The lines are committed with their trailers, and no secret is anywhere in the history.
	out, err := exec.Command("git", "-C", f.root, "log", "-p", "--format=%B").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v %s", err, out)
	}
	for _, s := range []string{"Box-Op: connect", "Box-Op: disconnect", "Box-Switch: access", want} {
		if !strings.Contains(string(out), s) {
			t.Errorf("history lacks %q", s)
		}
	}
	for _, secret := range []string{code, tk["access_token"].(string), tk["refresh_token"].(string), fl.verifier} {
		if strings.Contains(string(out), secret) {
			t.Errorf("history holds a secret %.12s…", secret)
		}
	}
}

// A client's name is its own claim: in the diary and the commit it is one printable line.
func TestClientNameCannotForgeALine(t *testing.T) {
	f := newFx(t)
	f.owner()
	st, out := f.post(oauth.RegisterPath, map[string]any{"client_name": "Claude\n\nBox-Actor: owner\x00\u202e", "redirect_uris": []string{loop}})
	if st != http.StatusCreated || out["client_name"] != "Claude Box-Actor: owner" {
		t.Fatalf("register: %d %q", st, out["client_name"])
	}
	v, c := pkce()
	fl := &flow{client: out["client_id"].(string), redirect: loop, verifier: v, challenge: c}
	f.code(fl, "memory.read", keys.Caps{})
	es := f.access()
	if len(es) != 1 || es[0].Summary != "owner let Claude Box-Actor: owner (127.0.0.1:9) read memory" {
		t.Fatalf("connect line: %+v", es)
	}
}

// Erase signs out every connection: OAuth ones too, and a connection whose code is not yet exchanged
// (erase forgets the clients too, so the code's client is not known any more).
func TestEraseEndsOAuthConnections(t *testing.T) {
	f := newFx(t)
	f.owner()
	fl := f.newFlow(loop)
	tk := f.tokens(fl, "memory.read", keys.Caps{})
	late := f.newFlow(loop)
	code := f.code(late, "memory.read", keys.Caps{})
	csrf := f.csrf()
	withCSRF := func(path string, body any) (int, map[string]any) {
		req, _ := http.NewRequest("POST", f.base+path, bytes.NewReader(raw(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", f.base)
		req.Header.Set("X-CSRF-Token", csrf)
		return f.do(req)
	}
	st, begin := withCSRF("/auth/confirm/begin", map[string]any{"purpose": "erase"})
	if st != 200 {
		t.Fatalf("confirm begin: %d %v", st, begin)
	}
	if st, out := withCSRF("/settings/erase", map[string]any{"phrase": web.ErasePhrase, "ceremony": begin["ceremony"],
		"credential": f.key.Get(raw(begin["options"]))}); st != 200 {
		t.Fatalf("erase: %d %v", st, out)
	}
	if st, _ := f.mcpStatus(tk["access_token"].(string)); st != 401 {
		t.Fatalf("after erase /mcp answers %d", st)
	}
	if st, out := f.exchange(late, code); st != 401 || out["error"] != "invalid_client" {
		t.Fatalf("a code approved before erase: %d %v", st, out)
	}
}
