package page

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxmem/box/internal/passkeytest"
	"github.com/chromedp/cdproto/dom"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// A call the test box's API received.
type apiCall struct {
	Method, Path, Query, Body, ContentType, Token string
	Cookie                                        bool
}

// testBox serves pages with the real headers and bridge, and answers /api/sections/<slug>/… the way
// docs/PAGES.md says the box does (CORS for the page's opaque origin, x-section-token, JSON answers).
type testBox struct {
	srv    *httptest.Server
	pages  map[string][]byte
	mu     sync.Mutex
	calls  []apiCall
	data   map[string]any
	stolen bool
}

func newTestBox(t *testing.T, pages map[string][]byte) *testBox {
	b := &testBox{pages: pages, data: map[string]any{"k": "v"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "owner-session", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		w.Header().Set("Content-Security-Policy", "frame-src 'self'")
		fmt.Fprintf(w, `<!doctype html><title>Box</title><script>window.opened = [];
addEventListener("message", (e) => { if (e.source === document.querySelector("iframe").contentWindow) opened.push(e.data); });
</script><iframe sandbox=%q src="/s/%s/"></iframe>`, IframeSandbox, r.URL.Query().Get("page"))
	})
	mux.HandleFunc("GET /s/{slug}/", func(w http.ResponseWriter, r *http.Request) {
		slug := r.PathValue("slug")
		src, ok := b.pages[slug]
		if !ok {
			http.NotFound(w, r)
			return
		}
		out, err := Inject(src, Bridge{Box: b.srv.URL, Slug: slug, Version: 3, Token: "tok_" + slug + "_0123456789"})
		if err != nil {
			t.Errorf("inject %s: %v", slug, err)
			return
		}
		h, err := Headers(b.srv.URL)
		if err != nil {
			t.Error(err)
			return
		}
		for k, v := range h {
			w.Header()[k] = v
		}
		w.Write(out)
	})
	mux.HandleFunc("/api/sections/{slug}/{rest...}", b.api)
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	return b
}

func (b *testBox) api(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "null")
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
		w.Header().Set("Access-Control-Allow-Headers", "x-section-token, content-type")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.calls = append(b.calls, apiCall{Method: r.Method, Path: r.PathValue("rest"), Query: r.URL.RawQuery, Body: string(body),
		ContentType: r.Header.Get("Content-Type"), Token: r.Header.Get("X-Section-Token"), Cookie: r.Header.Get("Cookie") != ""})
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("X-Section-Token") != "tok_"+r.PathValue("slug")+"_0123456789" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"No such page key."}`)
		return
	}
	switch r.Method + " " + r.PathValue("rest") {
	case "GET memory/map":
		fmt.Fprint(w, `{"maps":[{"name":"moc-garden","notes":[{"name":"entity-tomatoes","description":"by the fence"}]}]}`)
	case "POST memory/remember":
		var in struct{ Text string }
		json.Unmarshal(body, &in)
		json.NewEncoder(w).Encode(map[string]string{"text": "Saved: " + in.Text})
	case "GET data":
		json.NewEncoder(w).Encode(map[string]any{"key": r.URL.Query().Get("key"), "value": b.data[r.URL.Query().Get("key")]})
	case "GET diary":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.WriteHeader(n)
		if n == http.StatusForbidden {
			fmt.Fprint(w, `{"error":"It may read only moc-garden."}`)
		}
	case "POST ui/open":
		fmt.Fprint(w, `{"url":"/today"}`)
	default:
		fmt.Fprint(w, `{"ok":true}`)
	}
}

func (b *testBox) find(method, path string) []apiCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []apiCall
	for _, c := range b.calls {
		if c.Method == method && c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

func browse(t *testing.T) (context.Context, func(string, ...chromedp.Action[chromedp.Void])) {
	ctx, cancel := passkeytest.Browser(t)
	t.Cleanup(cancel)
	return ctx, func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
}

// TestBridgeInBrowser: the Garden page in its sandboxed iframe lists through the bridge, remembers
// with a text/plain JSON body and its own token (never a cookie), posts its heartbeat {version} 1.5 s
// after load, and box.ui.open reaches the box's page as a message.
func TestBridgeInBrowser(t *testing.T) {
	ui := []byte(strings.Replace(string(garden(t)), "</body>", `<script>box.ui.open("today")</script></body>`, 1))
	b := newTestBox(t, map[string][]byte{"garden": garden(t), "gardenui": ui})
	ctx, run := browse(t)
	start := time.Now()
	run("open the garden", chromedp.Navigate(b.srv.URL+"/?page=garden"), passkeytest.Poll(`document.querySelector("iframe") !== null`))
	deadline := time.Now().Add(20 * time.Second)
	for len(b.find("POST", "heartbeat")) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	beats := b.find("POST", "heartbeat")
	if len(beats) != 1 || beats[0].Body != `{"version":3}` || beats[0].ContentType != "text/plain;charset=UTF-8" {
		t.Fatalf("heartbeats: %+v (all calls %+v)", beats, b.calls)
	}
	if since := time.Since(start); since < 1500*time.Millisecond {
		t.Errorf("the heartbeat came %v after the navigation, before the 1.5 s after load", since)
	}
	maps := b.find("GET", "memory/map")
	if len(maps) != 1 || maps[0].Token != "tok_garden_0123456789" || maps[0].Cookie {
		t.Errorf("map calls: %+v", maps)
	}
	// Type into the page inside the iframe, as the owner would: the iframe's document is its own target.
	run("remember", chromedp.Navigate(b.srv.URL+"/s/garden/"), chromedp.WaitVisible(chromedp.CSS("#t")),
		chromedp.SendKeys(chromedp.CSS("#t"), "Planted beans by the shed"), chromedp.Click(chromedp.CSS("form button")),
		passkeytest.Poll(`document.querySelector("#e").textContent === "Saved: Planted beans by the shed"`))
	rem := b.find("POST", "memory/remember")
	if len(rem) != 1 || rem[0].Body != `{"text":"Planted beans by the shed"}` || rem[0].ContentType != "text/plain;charset=UTF-8" || rem[0].Cookie {
		t.Errorf("remember calls: %+v", rem)
	}
	list, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#n").innerText`))
	if err != nil || list != "entity-tomatoes — by the fence" {
		t.Errorf("the list shows %q (%v)", list, err)
	}
	run("ui.open", chromedp.Navigate(b.srv.URL+"/?page=gardenui"),
		passkeytest.Poll(`window.opened && opened.length === 1 && opened[0].type === "box:open" && opened[0].url === "/today" && opened[0].slug === "gardenui"`))
}

// stunServer listens for the STUN packets a page's WebRTC would send (ICE gathering against
// stun:127.0.0.1:<port>) and counts them.
func stunServer(t *testing.T) (port string, packets func() int) {
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	var n atomic.Int32
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	return strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port), func() int { return int(n.Load()) }
}

// TestGuardInBrowser: a page that got past the checks finds the refused APIs gone, cannot make a
// frame by any door, cannot read cookies or fetch elsewhere, and gets clear errors for 401/403/423/429.
func TestGuardInBrowser(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "stolen")
	}))
	defer other.Close()
	probe, err := os.ReadFile("testdata/probe.html")
	if err != nil {
		t.Fatal(err)
	}
	probe = []byte(strings.Replace(string(probe), "OTHER +", strconv.Quote(other.URL)+" +", 1))
	doors, err := os.ReadFile("testdata/doors.html")
	if err != nil {
		t.Fatal(err)
	}
	stunPort, packets := stunServer(t)
	doors = []byte(strings.ReplaceAll(string(doors), "STUNPORT", stunPort))
	b := newTestBox(t, map[string][]byte{"probe": probe, "doors": doors})
	ctx, run := browse(t)
	run("probe", chromedp.Navigate(b.srv.URL+"/s/probe/"), passkeytest.Poll(`window.__probe !== undefined`))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`window.__probe`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"typeof WebSocket": "undefined", "typeof EventSource": "undefined", "typeof RTCPeerConnection": "undefined",
		"typeof webkitRTCPeerConnection": "undefined", "typeof RTCDataChannel": "undefined", "typeof Worker": "undefined",
		"typeof SharedWorker": "undefined", "typeof WebTransport": "undefined", "typeof PresentationRequest": "undefined",
		"typeof navigator.sendBeacon": "undefined", "typeof navigator.serviceWorker": "undefined",
		"typeof document.write": "undefined", "own open": "the page's own open",
		"createElement iframe": "NotSupportedError", "append parsed iframe": "NotSupportedError",
		"innerHTML iframe": "NotSupportedError", "insertAdjacentHTML object": "NotSupportedError",
		"template then append": "no", "shadow iframe": "NotSupportedError", "patched querySelector": "NotSupportedError",
		"frames": float64(0), "cookie": "SecurityError", "localStorage": "SecurityError", "box is frozen": "TypeError",
		"token in the DOM": "no", "fetch elsewhere": "TypeError", "map": "entity-tomatoes",
		"status 401": "401 " + "This page's key is no longer valid: reload the page (it may have been updated or removed).",
		"status 403": "403 This page isn't allowed to do that. It may read only moc-garden.",
		"status 423": "423 Safe mode is on: the owner's pages are paused until it is turned off in Settings → Things I built.",
		"status 429": "429 This page asked too often: wait a moment and try again.",
		"status 500": "500 The box answered 500.",
		"data":       "v", "empty search": "Give words to search for.",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the probe reported %d results, the test knows %d: %v", len(got), len(want), got)
	}
	for _, c := range b.calls {
		if c.Cookie {
			t.Errorf("a bridge call carried a cookie: %+v", c)
		}
	}

	// The doors the list of insertion methods never named: each is refused where the frame is made.
	run("doors", chromedp.Navigate(b.srv.URL+"/s/doors/"), passkeytest.Poll(`window.__doors !== undefined`))
	doorsGot, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`window.__doors`))
	if err != nil {
		t.Fatal(err)
	}
	wantDoors := map[string]any{"typeof XSLTProcessor": "undefined", "frames": float64(0), "frames in the shadow root": float64(0),
		"children that ran": float64(0)}
	for _, door := range []string{"select.add of an XHTML option", "table.caption from XHTML", "select.options from XHTML",
		"createContextualFragment", "createDocument of a frame", "XML fragment with a prefix", "noscript read two ways",
		"frame in a template's template", "customized built-in frame"} {
		wantDoors[door] = "NotSupportedError"
	}
	for k, v := range wantDoors {
		if doorsGot[k] != v {
			t.Errorf("%s = %#v, want %#v", k, doorsGot[k], v)
		}
	}
	if len(doorsGot) != len(wantDoors) {
		t.Errorf("the doors page reported %d results, the test knows %d: %v", len(doorsGot), len(wantDoors), doorsGot)
	}

	// The last net: a frame put in by a way no script has (the DevTools protocol, standing for a door
	// the guard does not know), inside a shadow root, is removed before its document runs.
	run("a frame from outside the page", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, dom.GetDocument, dom.GetDocumentParams{}); err != nil {
			return err
		}
		obj, err := chromedp.Call(ctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: `document.getElementById("host").shadowRoot.getElementById("slot")`})
		if err != nil || obj.Result == nil || obj.Result.ObjectID == "" {
			return fmt.Errorf("the shadow root's paragraph: %v %+v", err, obj)
		}
		node, err := chromedp.Call(ctx, dom.RequestNode, dom.RequestNodeParams{ObjectID: obj.Result.ObjectID})
		if err != nil {
			return err
		}
		child := `<script>parent.postMessage("child ran", "*")</` + `script>`
		_, err = chromedp.Call(ctx, dom.SetOuterHTML, dom.SetOuterHTMLParams{NodeID: node.NodeID,
			OuterHTML: `<iframe srcdoc="` + html.EscapeString(child) + `"></iframe>`})
		return err
	}))
	time.Sleep(1500 * time.Millisecond)
	after, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[window.length, document.getElementById("host").shadowRoot.querySelectorAll("iframe").length, __msgs.length]`))
	if err != nil || len(after) != 3 || after[0] != 0 || after[1] != 0 || after[2] != 0 {
		t.Errorf("after a frame was put in the shadow root from outside: frames, frames in the root, children that ran = %v (%v)", after, err)
	}
	time.Sleep(time.Second)
	if n := packets(); n > 0 {
		t.Errorf("the STUN server received %d packets from the page's WebRTC", n)
	}
}

// TestErrorOnLoad: a page that throws while loading posts error {version, message} and no heartbeat.
func TestErrorOnLoad(t *testing.T) {
	src, err := os.ReadFile("testdata/throws.html")
	if err != nil {
		t.Fatal(err)
	}
	b := newTestBox(t, map[string][]byte{"throws": src})
	_, run := browse(t)
	run("open", chromedp.Navigate(b.srv.URL+"/?page=throws"))
	deadline := time.Now().Add(20 * time.Second)
	for len(b.find("POST", "error")) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond) // past the 1.5 s after load a heartbeat would come
	errsPosted, beats := b.find("POST", "error"), b.find("POST", "heartbeat")
	if len(errsPosted) != 1 || !strings.Contains(errsPosted[0].Body, `"version":3`) || !strings.Contains(errsPosted[0].Body, "null") {
		t.Errorf("errors posted: %+v", errsPosted)
	}
	if len(beats) != 0 {
		t.Errorf("a page that threw posted a heartbeat: %+v", beats)
	}
}

// TestTokenStaysInTheBridge: a page that hangs setters and getters on Object.prototype (the names the
// bridge's request sets, and those fetch reads from its init) learns nothing of its token: the bridge
// builds its requests on objects with no prototype. The page posts what it caught, so a catch shows.
func TestTokenStaysInTheBridge(t *testing.T) {
	thief := []byte(`<!doctype html><title>thief</title><body><p id="s">…</p><script>
const caught = [];
const grab = (o) => { try { for (const k in o) if (typeof o[k] === "string" && o[k].startsWith("tok_")) caught.push(o[k]); } catch (_) {} };
for (const name of ["content-type", "body", "signal", "referrer", "integrity", "keepalive", "priority", "window", "duplex", "mode", "x-section-token"]) {
  Object.defineProperty(Object.prototype, name, { configurable: true,
    get() { grab(this); if (this.headers) grab(this.headers); return undefined; },
    set(v) { grab(this); if (this.headers) grab(this.headers); } });
}
box.memory.remember("first").catch(() => {}).then(() => {
  for (const name of ["content-type", "body", "signal", "referrer", "integrity", "keepalive", "priority", "window", "duplex", "mode", "x-section-token"]) delete Object.prototype[name];
  return box.data.set("caught", caught.join(",") || "nothing");
}).then(() => { document.getElementById("s").textContent = "done"; });
</script></body>`)
	b := newTestBox(t, map[string][]byte{"thief": thief})
	_, run := browse(t)
	run("the thief", chromedp.Navigate(b.srv.URL+"/s/thief/"), passkeytest.Poll(`document.getElementById("s").textContent === "done"`))
	sets := b.find("POST", "data")
	if len(sets) != 1 || !strings.Contains(sets[0].Body, `"caught"`) {
		t.Fatalf("the page's report: %+v (all calls %+v)", sets, b.calls)
	}
	if strings.Contains(sets[0].Body, "tok_") || !strings.Contains(sets[0].Body, "nothing") {
		t.Fatalf("the page caught its token: %s", sets[0].Body)
	}
	if rem := b.find("POST", "memory/remember"); len(rem) != 1 || rem[0].Token != "tok_thief_0123456789" || rem[0].ContentType != "text/plain;charset=UTF-8" {
		t.Errorf("the remember call: %+v", rem)
	}
}
