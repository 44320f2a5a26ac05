package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/passkeytest"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/web"
)

type fx struct {
	t    *testing.T
	a    *app.App
	b    *box.Box
	k    *keys.Store
	st   *state.Store
	g    *gate.Gate
	m    *memory.Memory
	w    *web.Web
	srv  *httptest.Server
	base string
	c    *http.Client
	key  *passkeytest.Key

	clock *passkeytest.Clock
}

// newFx is the web UI over a new box, composed by the composition root (on a clock the test moves), served
// on 127.0.0.1:0.
func newFx(t *testing.T) *fx { return newFxWith(t, app.Options{}) }

// newFxWith is newFx with the root's options (its clock and vault are the fixture's).
func newFxWith(t *testing.T, opts app.Options) *fx {
	t.Helper()
	return newFxOn(t, passkeytest.NewClock(), opts)
}

// newFxOn is newFxWith on the clock c (in the zone of the owner a test is about).
func newFxOn(t *testing.T, c *passkeytest.Clock, opts app.Options) *fx {
	t.Helper()
	f := &fx{t: t, clock: c}
	opts.Now, opts.VaultDir = f.clock.Now, filepath.Join(t.TempDir(), "vault")
	a, err := app.Init(context.Background(), t.TempDir(), nil, "true", opts)
	if err != nil {
		t.Fatal(err)
	}
	f.a, f.b, f.k, f.st, f.g, f.m = a, a.Box, a.Keys, a.State, a.Gate, a.Memory
	f.w, err = web.New(web.Config{Box: a.Box, State: a.State, Keys: a.Keys, Todos: a.Todos, Gate: a.Gate, Memory: a.Memory, Brain: a.Brain, Builds: a.Builds,
		Connectors: a.Connectors, Routines: a.Routines, Erase: a.Erase, Backups: a.BackupNames, Freeze: a.Freeze, Now: f.clock.Now, Jobs: a.Jobs})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(f.w.Handler())
	_, port, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	f.base = "http://localhost:" + port
	f.c = newClient()
	f.key = passkeytest.New(t, f.base, "localhost")
	t.Cleanup(func() {
		f.srv.Close()
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}

func newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// call posts JSON and returns the status and the decoded answer.
func (f *fx) call(c *http.Client, path string, body any, csrf string) (int, map[string]any) {
	f.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", f.base+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.base)
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]any{}
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func (f *fx) form(c *http.Client, path string, v url.Values) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func (f *fx) get(c *http.Client, path string) (int, string) {
	f.t.Helper()
	res, err := c.Get(f.base + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

var csrfRe = regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`)

func (f *fx) csrf(c *http.Client) string {
	f.t.Helper()
	_, body := f.get(c, "/today")
	m := csrfRe.FindStringSubmatch(body)
	if m == nil {
		f.t.Fatalf("no csrf token on /today:\n%.400s", body)
	}
	return m[1]
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// register makes the first passkey through the setup link and signs the client in.
func (f *fx) register(c *http.Client, code string) (int, map[string]any) {
	f.t.Helper()
	st, begin := f.call(c, "/auth/register/begin", map[string]any{"code": code}, "")
	if st != 200 {
		return st, begin
	}
	return f.call(c, "/auth/register/finish", map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Create(raw(begin["options"])), "name": "test"}, "")
}

func (f *fx) setupCode() string {
	f.t.Helper()
	link, err := f.w.SetupLink(context.Background(), f.base)
	if err != nil || link == "" {
		f.t.Fatalf("setup link: %q %v", link, err)
	}
	u, _ := url.Parse(link)
	return u.Query().Get("code")
}

func (f *fx) signedIn() string {
	f.t.Helper()
	if st, out := f.register(f.c, f.setupCode()); st != 200 {
		f.t.Fatalf("register: %d %v", st, out)
	}
	return f.csrf(f.c)
}

// assert runs a passkey check bound to a purpose and returns the body to post with it.
func (f *fx) assert(csrf, purpose, card string) map[string]any {
	f.t.Helper()
	st, begin := f.call(f.c, "/auth/confirm/begin", map[string]any{"purpose": purpose, "card": card}, csrf)
	if st != 200 {
		f.t.Fatalf("confirm begin: %d %v", st, begin)
	}
	return map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Get(raw(begin["options"]))}
}

func TestSetupLinkOnceAndExpiry(t *testing.T) {
	f := newFx(t)
	// No session: pages go to sign-in, and sign-in says to use the setup link.
	res, _ := f.c.Get(f.base + "/today")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/signin" {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if _, body := f.get(f.c, "/signin"); !strings.Contains(body, "setup link") {
		t.Fatalf("signin without a passkey must point to the setup link")
	}
	code := f.setupCode()
	st, out := f.register(f.c, code)
	if st != 200 || out["ok"] != true {
		t.Fatalf("register: %d %v", st, out)
	}
	var sess *http.Cookie
	u, _ := url.Parse(f.base)
	for _, c := range f.c.Jar.Cookies(u) {
		sess = c
	}
	if sess == nil {
		t.Fatal("no session cookie")
	}
	if st, body := f.get(f.c, "/today"); st != 200 || !strings.Contains(body, "Waiting for you") {
		t.Fatalf("today: %d", st)
	}
	if link, _ := f.w.SetupLink(context.Background(), f.base); link != "" {
		t.Fatalf("a box with a passkey prints no setup link: %s", link)
	}
	// Reused code.
	other := newClient()
	if st, out := f.register(other, code); st != 401 || !strings.Contains(fmt.Sprint(out["text"]), "already used") {
		t.Fatalf("reused code: %d %v", st, out)
	}
	// Expired code (made directly: the box already has a passkey, so SetupLink makes none).
	f2 := newFx(t)
	code2 := f2.setupCode()
	f2.clock.Advance(16 * time.Minute)
	if st, out := f2.register(newClient(), code2); st != 401 || !strings.Contains(fmt.Sprint(out["text"]), "expired") {
		t.Fatalf("expired code: %d %v", st, out)
	}
	if st, _ := f2.register(newClient(), "not-a-code"); st != 401 {
		t.Fatalf("made-up code: %d", st)
	}
	if _, body := f2.get(newClient(), "/setup?code="+code2); !strings.Contains(body, "expired") {
		t.Fatalf("the setup page says the link expired")
	}
}

// Two box serve starts before the first passkey print two links: once one makes the passkey, the other
// stops working, whether it starts afterwards or had already begun.
func TestSetupLinkEndsWithTheFirstPasskey(t *testing.T) {
	f := newFx(t)
	older, oldest, newer := f.setupCode(), f.setupCode(), f.setupCode()
	st, begun := f.call(newClient(), "/auth/register/begin", map[string]any{"code": oldest}, "")
	if st != 200 {
		t.Fatalf("begin: %d %v", st, begun)
	}
	if st, out := f.register(f.c, newer); st != 200 || out["ok"] != true {
		t.Fatalf("the first passkey: %d %v", st, out)
	}
	if st, out := f.register(newClient(), older); st != 401 || !strings.Contains(fmt.Sprint(out["text"]), "already has its passkey") {
		t.Fatalf("an older link after the first passkey: %d %v", st, out)
	}
	thief := passkeytest.New(t, f.base, "localhost")
	st, out := f.call(newClient(), "/auth/register/finish", map[string]any{"ceremony": begun["ceremony"], "credential": thief.Create(raw(begun["options"])), "name": "thief"}, "")
	if st != 401 || !strings.Contains(fmt.Sprint(out["text"]), "already has its passkey") {
		t.Fatalf("a link begun before the first passkey, finished after: %d %v", st, out)
	}
	var n int
	if err := f.st.DB().QueryRow(`SELECT count(*) FROM web_passkeys`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("passkeys: %d %v", n, err)
	}
}

func TestCookieHeaders(t *testing.T) {
	f := newFx(t)
	st, begin := f.call(f.c, "/auth/register/begin", map[string]any{"code": f.setupCode()}, "")
	if st != 200 {
		t.Fatal(begin)
	}
	body := raw(map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Create(raw(begin["options"]))})
	req, _ := http.NewRequest("POST", f.base+"/auth/register/finish", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	sc := res.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=2592000"} {
		if !strings.Contains(sc, want) {
			t.Errorf("cookie %q lacks %s", sc, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP: %q", csp)
	}
}

func TestCSRFAndOrigin(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	if res := f.form(f.c, "/memory/remember", url.Values{"text": {"Leo swims on Thursdays"}}); res.StatusCode != 403 {
		t.Fatalf("missing csrf: %d", res.StatusCode)
	}
	if res := f.form(f.c, "/memory/remember", url.Values{"text": {"Leo swims"}, "csrf": {"wrong"}}); res.StatusCode != 403 {
		t.Fatalf("wrong csrf: %d", res.StatusCode)
	}
	if st, _ := f.call(f.c, "/settings/erase", map[string]any{"phrase": "erase my box"}, ""); st != 403 {
		t.Fatalf("JSON without csrf: %d", st)
	}
	res := f.form(f.c, "/memory/remember", url.Values{"text": {"Leo swims on Thursdays"}, "csrf": {csrf}})
	if res.StatusCode != 303 || !strings.Contains(res.Header.Get("Location"), "Saved") {
		t.Fatalf("with csrf: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Another site's page posting with the owner's cookie.
	req, _ := http.NewRequest("POST", f.base+"/settings/freeze", strings.NewReader("on=1&csrf="+url.QueryEscape(csrf)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	r2, _ := f.c.Do(req)
	if r2.StatusCode != 403 {
		t.Fatalf("cross-origin post: %d", r2.StatusCode)
	}
	if frozen, _ := f.st.Frozen(context.Background()); frozen {
		t.Fatal("a cross-origin post froze the box")
	}
	// Signed out: JSON gets 401.
	if st, _ := f.call(newClient(), "/chat", map[string]any{"text": "hi"}, csrf); st != 401 {
		t.Fatalf("signed out post: %d", st)
	}
}

func TestCookieFromAnotherBox(t *testing.T) {
	a, b := newFx(t), newFx(t)
	a.signedIn()
	b.signedIn()
	ua, _ := url.Parse(a.base)
	ub, _ := url.Parse(b.base)
	var fromA *http.Cookie
	for _, c := range a.c.Jar.Cookies(ua) {
		fromA = c
	}
	var nameB string
	for _, c := range b.c.Jar.Cookies(ub) {
		nameB = c.Name
	}
	if fromA.Name == nameB {
		t.Fatalf("two boxes share a cookie name %s (cookies ignore ports)", nameB)
	}
	// A's token under B's cookie name, and under its own name, both get nowhere in B.
	for _, name := range []string{nameB, fromA.Name} {
		req, _ := http.NewRequest("GET", b.base+"/today", nil)
		req.AddCookie(&http.Cookie{Name: name, Value: fromA.Value})
		res, err := newClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/signin" {
			t.Fatalf("a cookie from another box (%s): %d", name, res.StatusCode)
		}
	}
}

func remember(t *testing.T, m *memory.Memory, who string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := m.Remember(context.Background(), box.Actor{Who: who, Via: "mcp", Trust: "outside"}, memory.RememberInput{Text: l}); err != nil {
			t.Fatal(err)
		}
	}
}

var claude = gate.Asker{Connection: "Claude", Via: "mcp", Host: "claude.ai"}

// forgetCard is what the MCP surface does when an assistant asks to forget more than 5 lines.
func forgetCard(t *testing.T, f *fx, words string) gate.ApprovalCard {
	t.Helper()
	lines, err := f.m.ForgetPreview(context.Background(), words)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.g.Propose(context.Background(), memory.ForgetAction(words, lines), claude)
	if err != nil || out.Card == nil {
		t.Fatalf("propose: %+v %v", out, err)
	}
	return *out.Card
}

func sixLines(t *testing.T, f *fx) {
	remember(t, f.m, "Claude", "Leo swims on Monday.", "Leo swims on Tuesday.", "Leo swims on Wednesday.",
		"Leo swims on Thursday.", "Leo swims on Friday.", "Leo swims on Saturday.")
}

func TestForgetLinesMatchesMemory(t *testing.T) {
	f := newFx(t)
	sixLines(t, f)
	lines, _ := f.m.ForgetPreview(context.Background(), "leo swims")
	res, err := f.m.Forget(context.Background(), box.Actor{Who: "owner"}, memory.ForgetInput{Words: "leo swims"})
	if err != nil || !res.NeedsConfirm {
		t.Fatalf("forget: %+v %v", res, err)
	}
	if len(lines) != len(res.Matched) {
		t.Fatalf("gate sees %d lines, memory %d", len(lines), len(res.Matched))
	}
}

func TestApproveCard(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	sixLines(t, f)
	c := forgetCard(t, f, "leo swims")
	if _, body := f.get(f.c, "/today"); !strings.Contains(body, "Sent by Claude (claude.ai)") || !strings.Contains(body, "Yes, just this once") {
		t.Fatalf("today shows the card with its sender:\n%s", body)
	}
	body := f.assert(csrf, "approve", c.ID)
	st, out := f.call(f.c, "/cards/"+c.ID+"/approve", body, csrf)
	if st != 200 || !strings.Contains(fmt.Sprint(out["text"]), "Forgot 6 lines") {
		t.Fatalf("approve: %d %v", st, out)
	}
	if lines, _ := f.m.ForgetPreview(context.Background(), "leo swims"); len(lines) != 0 {
		t.Fatalf("still there: %v", lines)
	}
	// A replayed assertion runs nothing.
	if st, out := f.call(f.c, "/cards/"+c.ID+"/approve", body, csrf); st == 200 {
		t.Fatalf("replay: %d %v", st, out)
	}
	es, _ := f.b.Diary(context.Background(), 2, nil)
	if es[0].Op != "approve" || es[1].Op != "forget" || es[1].Actor != "Claude" {
		t.Fatalf("diary: %+v", es)
	}
	// Undo the last change: the forget (the approval itself is paper trail).
	res := f.form(f.c, "/undo", url.Values{"csrf": {csrf}})
	if res.StatusCode != 303 {
		t.Fatalf("undo: %d", res.StatusCode)
	}
	if lines, _ := f.m.ForgetPreview(context.Background(), "leo swims"); len(lines) != 6 {
		t.Fatalf("undo brought back %d lines", len(lines))
	}
}

func TestApproveRefusals(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	sixLines(t, f)
	a := forgetCard(t, f, "leo swims")
	b := forgetCard(t, f, "leo monday")

	// A tampered card id: the assertion was made for card a, posted for card b.
	body := f.assert(csrf, "approve", a.ID)
	if st, out := f.call(f.c, "/cards/"+b.ID+"/approve", body, csrf); st != 403 {
		t.Fatalf("tampered id: %d %v", st, out)
	}
	// Ids that are not ids.
	for _, id := range []string{"..%2F..%2F_config%2Fswitches", "x.y"} {
		if st, _ := f.call(f.c, "/cards/"+id+"/approve", map[string]any{}, csrf); st != 404 {
			t.Fatalf("bad id %s: %d", id, st)
		}
	}
	// User verification false.
	f.key.UV = false
	body = f.assert(csrf, "approve", a.ID)
	if st, out := f.call(f.c, "/cards/"+a.ID+"/approve", body, csrf); st != 401 || !strings.Contains(fmt.Sprint(out["text"]), "verify") {
		t.Fatalf("uv false: %d %v", st, out)
	}
	f.key.UV = true
	// The action changed: a line the card lists is gone since it was made (the owner forgot it).
	if _, err := f.m.Forget(context.Background(), box.Actor{Who: "owner"}, memory.ForgetInput{Words: "leo tuesday"}); err != nil {
		t.Fatal(err)
	}
	body = f.assert(csrf, "approve", a.ID)
	if st, out := f.call(f.c, "/cards/"+a.ID+"/approve", body, csrf); st != 409 || !strings.Contains(fmt.Sprint(out["text"]), "nothing ran") {
		t.Fatalf("changed action: %d %v", st, out)
	}
	if lines, _ := f.m.ForgetPreview(context.Background(), "leo swims"); len(lines) != 5 {
		t.Fatalf("a changed action removed lines: %d left", len(lines))
	}
	// A line that arrived after the card was made is not the card's: approving removes exactly the lines
	// it lists, and the new one stays.
	a2 := forgetCard(t, f, "leo swims")
	remember(t, f.m, "Claude", "Leo swims on Sunday.")
	body = f.assert(csrf, "approve", a2.ID)
	if st, out := f.call(f.c, "/cards/"+a2.ID+"/approve", body, csrf); st != 200 || !strings.Contains(fmt.Sprint(out["text"]), "Forgot 5 lines") {
		t.Fatalf("approve after a new line: %d %v", st, out)
	}
	if lines, _ := f.m.ForgetPreview(context.Background(), "leo swims"); len(lines) != 1 || lines[0].Text != "Leo swims on Sunday." {
		t.Fatalf("the line that arrived after the card: %+v", lines)
	}
	// A frozen box runs nothing.
	f.st.SetFrozen(context.Background(), true)
	body = f.assert(csrf, "approve", b.ID)
	if st, out := f.call(f.c, "/cards/"+b.ID+"/approve", body, csrf); st != http.StatusLocked {
		t.Fatalf("approve while frozen: %d %v", st, out)
	}
	f.st.SetFrozen(context.Background(), false)
	// Declined with No: nothing runs, the card is archived.
	if res := f.form(f.c, "/cards/"+b.ID+"/decline", url.Values{"csrf": {csrf}}); res.StatusCode != 303 {
		t.Fatalf("decline: %d", res.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(f.b.Root, "_bookkeeping/archive/approvals", b.ID+".approval.card")); err != nil {
		t.Fatal(err)
	}
	if waiting, _ := f.g.Waiting(context.Background()); len(waiting) != 0 {
		t.Fatalf("still waiting: %d", len(waiting))
	}
}

func TestMakeKeyNeedsApproval(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	res := f.form(f.c, "/settings/keys", url.Values{"csrf": {csrf}, "name": {"Claude Code"}, "memory": {"1"}})
	if res.StatusCode != 303 || !strings.HasPrefix(res.Header.Get("Location"), "/today") {
		t.Fatalf("make key: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if conns, _ := f.k.List(context.Background()); len(conns) != 0 {
		t.Fatal("a key was made before the owner approved")
	}
	cards, _ := f.g.Waiting(context.Background())
	if len(cards) != 1 || cards[0].Kind != "access" {
		t.Fatalf("cards: %+v", cards)
	}
	st, out := f.call(f.c, "/cards/"+cards[0].ID+"/approve", f.assert(csrf, "approve", cards[0].ID), csrf)
	secret := fmt.Sprint(out["secret"])
	if st != 200 || !strings.HasPrefix(secret, keys.Prefix) {
		t.Fatalf("approve key: %d %v", st, out)
	}
	conn, err := f.k.Verify(context.Background(), secret)
	if err != nil || !conn.Caps.Memory || conn.Caps.Build {
		t.Fatalf("verify: %+v %v", conn, err)
	}
	// Revoking it in Settings stops it and is an access decision in the diary.
	f.form(f.c, "/settings/keys/"+conn.ID+"/revoke", url.Values{"csrf": {csrf}})
	if _, err := f.k.Verify(context.Background(), secret); err == nil {
		t.Fatal("a revoked key still works")
	}
	if es, _ := f.b.Diary(context.Background(), 1, nil); len(es) != 1 || es[0].Op != "revoke" || !strings.Contains(es[0].Summary, conn.ID) {
		t.Fatalf("no diary line for the revoke: %+v", es)
	}
	// Access at Never refuses at once.
	f.form(f.c, "/settings/switch", url.Values{"csrf": {csrf}, "switch": {"access"}, "choice": {"never"}})
	res = f.form(f.c, "/settings/keys", url.Values{"csrf": {csrf}, "name": {"Cursor"}})
	if loc, _ := url.QueryUnescape(res.Header.Get("Location")); !strings.Contains(loc, "Never") {
		t.Fatalf("never: %s", loc)
	}
}

func TestEraseAndFreeze(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	remember(t, f.m, "Claude", "Leo swims on Monday.")
	_, secret, err := f.k.New(context.Background(), "Claude", keys.Caps{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	if st, out := f.call(f.c, "/settings/erase", map[string]any{"phrase": "erase it"}, csrf); st != 400 {
		t.Fatalf("wrong phrase: %d %v", st, out)
	}
	body := f.assert(csrf, "erase", "")
	body["phrase"] = "Erase my box"
	if st, out := f.call(f.c, "/settings/erase", body, csrf); st != 200 {
		t.Fatalf("erase: %d %v", st, out)
	}
	if lines, _ := f.m.ForgetPreview(context.Background(), "leo"); len(lines) != 0 {
		t.Fatal("erase left memory lines")
	}
	if conns, _ := f.k.List(context.Background()); len(conns) != 0 {
		t.Fatalf("erase must end every connection and forget it: %+v", conns)
	}
	if _, err := f.k.Verify(context.Background(), secret); err == nil {
		t.Fatal("a key made before erase still works")
	}
	// Every session ends with the erase; the passkey stays, and signs the owner in again.
	if st, _ := f.get(f.c, "/today"); st != http.StatusSeeOther {
		t.Fatalf("a web session outlived the erase: %d", st)
	}
	st, begin := f.call(f.c, "/auth/login/begin", map[string]any{}, "")
	if st != 200 {
		t.Fatalf("login begin after erase: %d %v", st, begin)
	}
	if st, out := f.call(f.c, "/auth/login/finish", map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Get(raw(begin["options"]))}, ""); st != 200 {
		t.Fatalf("the passkey did not stay: %d %v", st, out)
	}
	csrf = f.csrf(f.c)
	f.form(f.c, "/settings/freeze", url.Values{"csrf": {csrf}, "on": {"1"}})
	if frozen, err := f.st.Frozen(context.Background()); err != nil || !frozen {
		t.Fatalf("not frozen: %v", err)
	}
	if es, err := f.b.Diary(context.Background(), 1, nil); err != nil || len(es) != 1 || es[0].Op != "freeze" || es[0].Via != "web" {
		t.Fatalf("the web UI's freeze is not in the diary as the CLI's is: %+v %v", es, err)
	}
	if _, out := f.call(f.c, "/chat", map[string]any{"text": "remember Leo swims"}, csrf); !strings.Contains(fmt.Sprint(out["reply"]), "frozen") {
		t.Fatalf("chat while frozen: %v", out)
	}
}

func TestChatWithoutBrain(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	_, out := f.call(f.c, "/chat", map[string]any{"text": "remember Leo has swim practice on Thursdays"}, csrf)
	if !strings.Contains(fmt.Sprint(out["reply"]), "Saved") {
		t.Fatalf("remember: %v", out)
	}
	_, out = f.call(f.c, "/chat", map[string]any{"text": "when does leo swim?"}, csrf)
	if r := fmt.Sprint(out["reply"]); !strings.Contains(r, "Thursdays") || !strings.Contains(r, "brain") {
		t.Fatalf("question: %v", out)
	}
	_, out = f.call(f.c, "/chat", map[string]any{"text": "forget swim practice"}, csrf)
	if !strings.Contains(fmt.Sprint(out["reply"]), "Forgot 1 line") {
		t.Fatalf("forget: %v", out)
	}
	// Search as you type.
	remember(t, f.m, "Claude", "Mia plays the cello.")
	st, body := f.get(f.c, "/api/search?q=cello")
	if st != 200 || !strings.Contains(body, "cello") {
		t.Fatalf("search: %d %s", st, body)
	}
	// Partial matches are marked and shown apart.
	if st, body := f.get(f.c, "/api/search?q=cello+zebra"); st != 200 || !strings.Contains(body, `"partial":true`) {
		t.Fatalf("partial search: %d %s", st, body)
	}
	st, body = f.get(f.c, "/memory?q=cello+zebra")
	_, list, _ := strings.Cut(body, `id="hits"`)
	if before, after, ok := strings.Cut(list, `class="partial-head"`); st != 200 || !ok || strings.Contains(before, "<mark>") || !strings.Contains(after, "<mark>cello</mark>") {
		t.Fatalf("memory page: partial matches under their heading: %d\n%s", st, body)
	}
}

func TestPagesRender(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	remember(t, f.m, "Claude", "Leo swims on Monday.")
	f.form(f.c, "/todo/add", url.Values{"csrf": {csrf}, "text": {"Buy goggles"}})
	for path, want := range map[string]string{
		"/today": "What the box did today", "/todo": "Buy goggles", "/memory": "Leo swims on Monday",
		"/diary": "Claude", "/chat": "brain", "/settings": "Give other assistants access",
		"/memory/note?name=MEMORY": "Edit", "/memory/edit?name=MEMORY": "textarea",
	} {
		st, body := f.get(f.c, path)
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %q\n%.300s", path, st, want, body)
		}
	}
}

func TestEditNote(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	_, page := f.get(f.c, "/memory/edit?name=MEMORY")
	base := regexp.MustCompile(`name="base" value="([0-9a-f]+)"`).FindStringSubmatch(page)[1]
	res := f.form(f.c, "/memory/edit", url.Values{"csrf": {csrf}, "name": {"MEMORY"}, "base": {base}, "text": {"# Memory\n\n- [core] Lives in Lisbon.\n"}})
	if loc, _ := url.QueryUnescape(res.Header.Get("Location")); !strings.Contains(loc, "Saved") {
		t.Fatalf("edit: %s", loc)
	}
	// A stale form is refused.
	res = f.form(f.c, "/memory/edit", url.Values{"csrf": {csrf}, "name": {"MEMORY"}, "base": {base}, "text": {"# Memory\n"}})
	if loc, _ := url.QueryUnescape(res.Header.Get("Location")); !strings.Contains(loc, "changed since") {
		t.Fatalf("stale edit: %s", loc)
	}
	// A note that fails validation is refused with the reason, and nothing is written.
	_, page = f.get(f.c, "/memory/edit?name=MEMORY")
	base = regexp.MustCompile(`name="base" value="([0-9a-f]+)"`).FindStringSubmatch(page)[1]
	res = f.form(f.c, "/memory/edit", url.Values{"csrf": {csrf}, "name": {"MEMORY"}, "base": {base}, "text": {"---\ntitle: [a]\n---\n# Memory\n"}})
	if loc, _ := url.QueryUnescape(res.Header.Get("Location")); !strings.HasPrefix(loc, "/memory/edit") || !strings.Contains(loc, "refused") {
		t.Fatalf("invalid edit: %s", loc)
	}
	if data, _ := os.ReadFile(filepath.Join(f.b.Root, "_content/memory/MEMORY.md")); !strings.Contains(string(data), "Lisbon") {
		t.Fatalf("an invalid edit was written:\n%s", data)
	}
	// An edit that adds a secret is refused: the box never holds one.
	res = f.form(f.c, "/memory/edit", url.Values{"csrf": {csrf}, "name": {"MEMORY"}, "base": {base}, "text": {"# Memory\n\n- [core] Lives in Lisbon.\n- My password is hunter2\n"}})
	if loc, _ := url.QueryUnescape(res.Header.Get("Location")); !strings.Contains(loc, "Nothing was saved") {
		t.Fatalf("secret edit: %s", loc)
	}
	// So is remembering one, before any card, diary line or commit could carry it.
	if _, err := f.g.SetSwitch(context.Background(), gate.By{Via: "cli", Local: true}, gate.Change, gate.AskMe); err != nil {
		t.Fatal(err)
	}
	f.form(f.c, "/memory/remember", url.Values{"csrf": {csrf}, "text": {"My password is hunter2"}})
	out, _ := exec.Command("git", "-C", f.b.Root, "log", "-p", "--all").CombinedOutput()
	if strings.Contains(string(out), "hunter2") {
		t.Fatal("the secret reached git")
	}
}

func TestUndoSince(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	remember(t, f.m, "Claude", "Leo rows on Sundays.") // before since: it stays
	f.clock.Advance(2 * time.Hour)
	since := f.clock.Now().Add(-time.Minute).Format("2006-01-02T15:04")
	remember(t, f.m, "Claude", "Leo swims on Monday.", "Mia plays the cello.")
	remember(t, f.m, "ChatGPT", "Ana likes tea.")
	res := f.form(f.c, "/undo/since", url.Values{"csrf": {csrf}, "who": {"Claude"}, "since": {since}})
	if loc, _ := url.QueryUnescape(res.Header.Get("Location")); !strings.Contains(loc, "Undid 2 changes by Claude") {
		t.Fatalf("undo since: %s", loc)
	}
	if l, _ := f.m.ForgetPreview(context.Background(), "cello"); len(l) != 0 {
		t.Fatal("Claude's line is still there")
	}
	if l, _ := f.m.ForgetPreview(context.Background(), "tea"); len(l) != 1 {
		t.Fatal("ChatGPT's line was undone too")
	}
	if l, _ := f.m.ForgetPreview(context.Background(), "rows sundays"); len(l) != 1 {
		t.Fatal("Claude's line from before since was undone too")
	}
}

func TestSessionsEnd(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	// Used every 6 days, a session still ends 30 days after sign-in.
	for range 4 {
		f.clock.Advance(6 * 24 * time.Hour)
		if st, _ := f.get(f.c, "/today"); st != 200 {
			t.Fatalf("active session ended early: %d", st)
		}
	}
	f.clock.Advance(7 * 24 * time.Hour) // 31 days in, but only 7 days idle... and past the 30-day cap
	if st, _ := f.get(f.c, "/today"); st != http.StatusSeeOther {
		t.Fatalf("a session older than 30 days must end: %d", st)
	}
	// Idle for more than 7 days.
	other := newClient()
	st, begin := f.call(other, "/auth/login/begin", map[string]any{}, "")
	if st != 200 {
		t.Fatalf("login begin: %d %v", st, begin)
	}
	if st, out := f.call(other, "/auth/login/finish", map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Get(raw(begin["options"]))}, ""); st != 200 {
		t.Fatalf("login: %d %v", st, out)
	}
	f.clock.Advance(7*24*time.Hour + time.Minute)
	if st, _ := f.get(other, "/today"); st != http.StatusSeeOther {
		t.Fatalf("a session idle for 7 days must end: %d", st)
	}
	// Sign out everywhere ends every session.
	a, b := newClient(), newClient()
	for _, c := range []*http.Client{a, b} {
		_, begin := f.call(c, "/auth/login/begin", map[string]any{}, "")
		f.call(c, "/auth/login/finish", map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Get(raw(begin["options"]))}, "")
	}
	if res := f.form(a, "/signout/all", url.Values{"csrf": {f.csrf(a)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out everywhere: %d", res.StatusCode)
	}
	if st, _ := f.get(b, "/today"); st != http.StatusSeeOther {
		t.Fatal("another browser is still signed in")
	}
	_ = csrf
}

func TestUndoEntryAndPasskeys(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	remember(t, f.m, "Claude", "Leo swims on Monday.", "Mia plays the cello.")
	es, _ := f.b.Diary(context.Background(), 2, nil) // newest first: the cello, then Leo
	res := f.form(f.c, "/undo", url.Values{"csrf": {csrf}, "entry": {es[1].ID}, "back": {"/diary"}})
	if res.StatusCode != 303 || !strings.HasPrefix(res.Header.Get("Location"), "/diary") {
		t.Fatalf("undo entry: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if l, _ := f.m.ForgetPreview(context.Background(), "leo"); len(l) != 0 {
		t.Fatal("the entry was not undone")
	}
	if l, _ := f.m.ForgetPreview(context.Background(), "cello"); len(l) != 1 {
		t.Fatal("undoing one entry touched another")
	}
	if _, body := f.get(f.c, "/diary"); !strings.Contains(body, "Undone") {
		t.Fatal("the diary shows what was undone")
	}
	// A redirect back never leaves the box.
	res = f.form(f.c, "/undo", url.Values{"csrf": {csrf}, "back": {"//evil.example/x"}})
	if loc := res.Header.Get("Location"); strings.HasPrefix(loc, "//") {
		t.Fatalf("open redirect: %s", loc)
	}
	// The only passkey cannot be removed, even with a passkey check.
	id := f.passkeyIDs()[0]
	if st, out := f.call(f.c, "/settings/passkeys/"+id+"/remove", f.assertRemove(f.key, csrf, id), csrf); st != 403 || !strings.Contains(fmt.Sprint(out["text"]), "only passkey") {
		t.Fatalf("removing the last passkey: %d %v", st, out)
	}
}

var passkeyIDRe = regexp.MustCompile(`data-passkey="([^"]+)"`)

// passkeyIDs are the ids of the owner's passkeys as Settings lists them.
func (f *fx) passkeyIDs() []string {
	f.t.Helper()
	_, body := f.get(f.c, "/settings")
	var ids []string
	for _, m := range passkeyIDRe.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// assertWith runs a passkey check of purpose (bound to passkey for passkey-remove) on client c, answered
// by key, and returns the body to post with it.
func (f *fx) assertWith(c *http.Client, key *passkeytest.Key, csrf, purpose, passkey string) map[string]any {
	f.t.Helper()
	st, begin := f.call(c, "/auth/confirm/begin", map[string]any{"purpose": purpose, "passkey": passkey}, csrf)
	if st != 200 {
		f.t.Fatalf("confirm begin %s: %d %v", purpose, st, begin)
	}
	return map[string]any{"ceremony": begin["ceremony"], "credential": key.Get(raw(begin["options"]))}
}

func (f *fx) assertRemove(key *passkeytest.Key, csrf, id string) map[string]any {
	return f.assertWith(f.c, key, csrf, "passkey-remove", id)
}

// TestPasskeyChangesNeedAFreshAssertion: a stolen session cookie (and the CSRF token any signed-in page
// shows) cannot add the thief's passkey or remove the owner's; each needs an assertion of one of the
// owner's passkeys made for that change just now.
func TestPasskeyChangesNeedAFreshAssertion(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	owner := f.passkeyIDs()
	if len(owner) != 1 {
		t.Fatalf("passkeys: %v", owner)
	}
	// The thief's browser holds a copy of the owner's cookie.
	thief := newClient()
	u, _ := url.Parse(f.base)
	thief.Jar.SetCookies(u, f.c.Jar.Cookies(u))
	tcsrf := f.csrf(thief)
	mine := passkeytest.New(t, f.base, "localhost")

	// Adding: the session and CSRF token alone begin nothing.
	if st, out := f.call(thief, "/auth/register/begin", map[string]any{}, tcsrf); st != 401 {
		t.Fatalf("register begin with a cookie only: %d %v", st, out)
	}
	// The thief's own passkey cannot answer the check, nor can an assertion made for something else.
	if st, out := f.call(thief, "/auth/register/begin", f.assertWith(thief, mine, tcsrf, "passkey-add", ""), tcsrf); st != 401 {
		t.Fatalf("register begin with the thief's passkey: %d %v", st, out)
	}
	if st, out := f.call(thief, "/auth/register/begin", f.assertWith(f.c, f.key, csrf, "erase", ""), tcsrf); st != 401 {
		t.Fatalf("register begin with an erase check: %d %v", st, out)
	}
	// Removing: nothing without a check; the thief's passkey does not pass.
	if st, out := f.call(thief, "/settings/passkeys/"+owner[0]+"/remove", map[string]any{}, tcsrf); st != 401 {
		t.Fatalf("remove with a cookie only: %d %v", st, out)
	}
	if st, out := f.call(thief, "/settings/passkeys/"+owner[0]+"/remove", f.assertWith(thief, mine, tcsrf, "passkey-remove", owner[0]), tcsrf); st != 401 {
		t.Fatalf("remove with the thief's passkey: %d %v", st, out)
	}
	if got := f.passkeyIDs(); len(got) != 1 || got[0] != owner[0] {
		t.Fatalf("the passkeys changed: %v", got)
	}

	// The owner adds a second passkey with a check of the first.
	second := passkeytest.New(t, f.base, "localhost")
	st, begin := f.call(f.c, "/auth/register/begin", f.assertWith(f.c, f.key, csrf, "passkey-add", ""), csrf)
	if st != 200 {
		t.Fatalf("register begin: %d %v", st, begin)
	}
	if st, out := f.call(f.c, "/auth/register/finish", map[string]any{"ceremony": begin["ceremony"], "credential": second.Create(raw(begin["options"])), "name": "phone"}, csrf); st != 200 {
		t.Fatalf("register finish: %d %v", st, out)
	}
	both := f.passkeyIDs()
	if len(both) != 2 {
		t.Fatalf("passkeys after adding: %v", both)
	}
	// A check made to remove one passkey does not remove the other.
	body := f.assertRemove(second, csrf, owner[0])
	other := both[1]
	if other == owner[0] {
		other = both[0]
	}
	if st, out := f.call(f.c, "/settings/passkeys/"+other+"/remove", body, csrf); st != 403 {
		t.Fatalf("a check for another passkey: %d %v", st, out)
	}
	if st, out := f.call(f.c, "/settings/passkeys/"+owner[0]+"/remove", f.assertRemove(second, csrf, owner[0]), csrf); st != 200 {
		t.Fatalf("remove: %d %v", st, out)
	}
	if got := f.passkeyIDs(); len(got) != 1 || got[0] == owner[0] {
		t.Fatalf("passkeys after removing: %v", got)
	}
}

func TestBareIPPointsToLocalhost(t *testing.T) {
	f := newFx(t)
	code := f.setupCode()
	res, err := http.Get(f.srv.URL + "/setup?code=" + code) // http://127.0.0.1:port
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), f.base+"/setup?code=") {
		t.Fatalf("the setup page on a bare IP must link to localhost:\n%.600s", body)
	}
}

// A flood of passkey ceremonies begun by strangers, from many addresses or from one, cannot lock the owner
// out: the box keeps no table of begun ceremonies (each is sealed into the id the browser holds), so the
// owner still signs in and confirms. A ceremony still works once, and an id the box did not seal does not
// open.
func TestCeremonyFloodCannotLockTheOwnerOut(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn() // the box has a passkey: sign-in ceremonies can begin
	h := f.w.Handler()
	begin := func(addr string) {
		r := httptest.NewRequest("POST", "http://localhost/auth/login/begin", strings.NewReader("{}"))
		r.RemoteAddr = addr
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	for a := range 60 { // 60 networks × 20: more than any global cap of 1,000 would hold
		for range 20 {
			begin(fmt.Sprintf("203.0.%d.7:1000", a))
		}
	}
	for range 300 {
		begin("198.51.100.2:1000")
	}
	// The owner signs in from another browser, and confirms a step from the signed-in one.
	owner := newClient()
	st, b := f.call(owner, "/auth/login/begin", map[string]any{}, "")
	if st != 200 {
		t.Fatalf("the owner's sign-in after the flood: %d %v", st, b)
	}
	finish := map[string]any{"ceremony": b["ceremony"], "credential": f.key.Get(raw(b["options"]))}
	if st, out := f.call(owner, "/auth/login/finish", finish, ""); st != 200 {
		t.Fatalf("the owner's sign-in after the flood: %d %v", st, out)
	}
	if st, out := f.call(f.c, "/auth/confirm/begin", map[string]any{"purpose": "erase"}, csrf); st != 200 {
		t.Fatalf("a signed-in confirmation after the flood: %d %v", st, out)
	}
	// The same answer again is refused: a ceremony works once.
	if st, out := f.call(newClient(), "/auth/login/finish", finish, ""); st != 401 {
		t.Fatalf("a replayed sign-in: %d %v", st, out)
	}
	// An id changed by one character, or made up, does not open.
	st, b = f.call(owner, "/auth/login/begin", map[string]any{}, "")
	id := []byte(b["ceremony"].(string))
	id[len(id)/2] ^= 1
	for _, bad := range []string{string(id), "made-up", ""} {
		if st, out := f.call(newClient(), "/auth/login/finish", map[string]any{"ceremony": bad, "credential": f.key.Get(raw(b["options"]))}, ""); st != 401 {
			t.Fatalf("ceremony %q: %d %v", bad, st, out)
		}
	}
	// A ceremony lasts five minutes.
	st, b = f.call(owner, "/auth/login/begin", map[string]any{}, "")
	f.clock.Advance(5*time.Minute + time.Second)
	if st, out := f.call(newClient(), "/auth/login/finish", map[string]any{"ceremony": b["ceremony"], "credential": f.key.Get(raw(b["options"]))}, ""); st != 401 {
		t.Fatalf("a ceremony after five minutes: %d %v", st, out)
	}
}

// Today is the owner's local day: what the box did in the last second of a leap day is today's until
// midnight, and yesterday's two seconds later (the test clock starts at 23:59:59 local, in any zone).
func TestTodayIsTheLocalDay(t *testing.T) {
	f := newFx(t)
	f.signedIn()
	remember(t, f.m, "Claude", "Leo swims on Monday.")
	did := `<span class="who">Claude</span> remembered: Leo swims on Monday.`
	if _, body := f.get(f.c, "/today"); !strings.Contains(body, "Tuesday 29 February") || !strings.Contains(body, did) {
		t.Fatalf("at 23:59:59 on 29 February, Today:\n%s", body)
	}
	f.clock.Advance(2 * time.Second)
	if _, body := f.get(f.c, "/today"); !strings.Contains(body, "Wednesday 1 March") || strings.Contains(body, did) {
		t.Fatalf("two seconds later, on 1 March, Today:\n%s", body)
	}
}

// The session cookie is host-only everywhere (no Domain), and over https it carries the __Host- prefix
// with Secure and Path=/, so no other host, port or plain-http page can set or read it; a cookie of the
// plain name is not taken over https.
func TestSessionCookieIsHostOnly(t *testing.T) {
	for _, secure := range []bool{false, true} {
		f := newFx(t)
		if secure {
			srv := httptest.NewTLSServer(f.w.Handler())
			t.Cleanup(srv.Close)
			_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "https://"), ":")
			f.base = "https://localhost:" + port
			tr := srv.Client().Transport.(*http.Transport).Clone()
			tr.TLSClientConfig.ServerName = "example.com" // the test certificate's name; the request goes to localhost
			f.c = &http.Client{Transport: tr}
			f.c.Jar, _ = cookiejar.New(nil)
			f.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			f.key = passkeytest.New(t, f.base, "localhost")
		}
		st, begin := f.call(f.c, "/auth/register/begin", map[string]any{"code": f.setupCode()}, "")
		if st != 200 {
			t.Fatalf("register begin: %d %v", st, begin)
		}
		body := raw(map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Create(raw(begin["options"])), "name": "test"})
		req, _ := http.NewRequest("POST", f.base+"/auth/register/finish", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", f.base)
		res, err := f.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		set := res.Header.Get("Set-Cookie")
		name, _, _ := strings.Cut(set, "=")
		switch {
		case res.StatusCode != 200 || strings.Contains(strings.ToLower(set), "domain="):
			t.Fatalf("secure %v: %d %q", secure, res.StatusCode, set)
		case secure && (!strings.HasPrefix(name, "__Host-box_") || !strings.Contains(set, "; Secure") || !strings.Contains(set, "Path=/;")):
			t.Fatalf("over https: %q", set)
		case !secure && (!strings.HasPrefix(name, "box_") || strings.Contains(set, "; Secure")):
			t.Fatalf("over http: %q", set)
		}
		if got, _ := f.get(f.c, "/today"); got != 200 {
			t.Fatalf("secure %v: signed in, /today answers %d", secure, got)
		}
		if secure {
			u, _ := url.Parse(f.base)
			value := f.c.Jar.Cookies(u)[0].Value
			req, _ := http.NewRequest("GET", f.base+"/today", nil)
			req.AddCookie(&http.Cookie{Name: strings.TrimPrefix(name, "__Host-"), Value: value})
			plain := srvClient(f.c)
			res, err := plain.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther {
				t.Errorf("the plain cookie name was taken over https: %d", res.StatusCode)
			}
		}
	}
}

// srvClient is c without its cookies.
func srvClient(c *http.Client) *http.Client {
	return &http.Client{Transport: c.Transport, CheckRedirect: c.CheckRedirect}
}

// With the owner on box.localhost (box serve's own name), the sign-in and setup pages reached by a
// loopback number or by plain localhost link to the same page there, where the passkey and the session
// cookie live; at box.localhost they do not.
func TestOwnerNameLinks(t *testing.T) {
	f := newFx(t)
	a := f.a
	w, err := web.New(web.Config{Box: a.Box, State: a.State, Keys: a.Keys, Todos: a.Todos, Gate: a.Gate, Memory: a.Memory, Brain: a.Brain, Builds: a.Builds, Routines: a.Routines,
		Erase: a.Erase, Freeze: a.Freeze, Now: f.clock.Now, OwnerName: "box.localhost"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(srv.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	for host, want := range map[string]bool{"localhost:" + port: true, "127.0.0.1:" + port: true, "box.localhost:" + port: false} {
		req, _ := http.NewRequest("GET", srv.URL+"/signin", nil)
		req.Host = host
		res, err := newClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if got := strings.Contains(string(b), `href="http://box.localhost:`+port+`/signin"`); got != want {
			t.Errorf("%s: links to box.localhost %v, want %v", host, got, want)
		}
	}
}
