package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/boxmem/box/internal/egresstest"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/oauth"
	"github.com/boxmem/box/internal/server"
)

const docID = "https://example.com/oauth/client.json"

func docJSON(fields map[string]any) string {
	d := map[string]any{"client_id": docID, "client_name": "Doc Client", "redirect_uris": []string{"http://127.0.0.1/callback"},
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}}
	for k, v := range fields {
		if v == nil {
			delete(d, k)
			continue
		}
		d[k] = v
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// docQuery is an /authorize query from a client known by its metadata document.
func (f *fx) docQuery(clientID, redirect string) (url.Values, string) {
	v, c := pkce()
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"st-1"},
		"code_challenge": {c}, "code_challenge_method": {"S256"}, "resource": {f.base + "/mcp"}}, v
}

// The Go SDK's client identifies itself by its metadata document instead of registering: the box fetches
// the document (https, public address, no redirects, 5 KB, a few seconds), checks it, shows its host on the
// consent page, accepts a loopback redirect on any port, and keeps the copy as long as its Cache-Control
// says.
func TestClientIDMetadataDocument(t *testing.T) {
	f := newFx(t)
	f.owner()
	f.docs.page("/oauth/client.json", docPage{header: http.Header{"Cache-Control": {"max-age=600"}}, body: docJSON(nil)})
	redirect := "http://127.0.0.1:53682/callback" // the document says http://127.0.0.1/callback: the app picks its port
	var consent string
	check := func(u *url.URL) {
		res, err := f.c.Get(f.base + u.RequestURI())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		consent = string(b)
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: docID},
		RedirectURL:                    redirect,
		AuthorizationCodeFetcher:       f.consentFetcher(keys.Caps{Memory: true}, check),
	}
	tools := f.connectGo(f.base+"/mcp", cfg)
	if !strings.Contains(strings.Join(tools, " "), "memory_remember") {
		t.Fatalf("tools: %v", tools)
	}
	if !strings.Contains(consent, `id="client-host">example.com<`) || !strings.Contains(consent, "Doc Client") {
		t.Fatalf("the consent page does not show the document's host and name:\n%s", consent)
	}
	list, _ := f.grants.List(context.Background())
	if len(list) != 1 || list[0].ClientID != docID || list[0].Client != "Doc Client" || list[0].Host != "127.0.0.1:53682" {
		t.Fatalf("connections: %+v", list)
	}
	if n := f.docs.count("/oauth/client.json"); n != 1 {
		t.Fatalf("the document was fetched %d times", n)
	}
	// Within its max-age the stored copy serves; past it, the document is fetched again.
	q, _ := f.docQuery(docID, redirect)
	if st, loc, out := f.authorize(q); st != http.StatusFound || loc.Path != oauth.ConsentPath {
		t.Fatalf("within max-age: %d %v %v", st, loc, out)
	}
	if n := f.docs.count("/oauth/client.json"); n != 1 {
		t.Fatalf("within max-age the document was fetched %d times", n)
	}
	f.clock.Advance(601 * time.Second)
	if st, loc, out := f.authorize(q); st != http.StatusFound || loc.Path != oauth.ConsentPath {
		t.Fatalf("after max-age: %d %v %v", st, loc, out)
	}
	if n := f.docs.count("/oauth/client.json"); n != 2 {
		t.Fatalf("past max-age the document was fetched %d times in all, want 2", n)
	}
}

// A document the box cannot use ends the request on a page (never a redirect), and nothing of it is kept:
// once it is right, it works as soon as the failure is no longer remembered (a minute).
func TestClientIDMetadataDocumentRefusals(t *testing.T) {
	f := newFx(t)
	redirect := "http://127.0.0.1:4000/callback"
	cases := []struct {
		name, path string
		page       docPage
		want       string // in the error description
	}{
		{"another client_id", "/a.json", docPage{body: docJSON(map[string]any{"client_id": "https://example.com/other.json"})}, "names another client_id"},
		{"a redirect URI it does not list", "/b.json", docPage{body: docJSON(map[string]any{"redirect_uris": []string{"https://app.example/cb"}})}, "not one this client registered"},
		{"a client secret", "/c.json", docPage{body: docJSON(map[string]any{"client_secret": "s3cret"})}, "client_secret"},
		{"secret-based authentication", "/d.json", docPage{body: docJSON(map[string]any{"token_endpoint_auth_method": "client_secret_basic"})}, "public clients only"},
		{"an http redirect URI elsewhere", "/e.json", docPage{body: docJSON(map[string]any{"redirect_uris": []string{"http://app.example/cb"}})}, "must be https"},
		{"no redirect URIs", "/f.json", docPage{body: docJSON(map[string]any{"redirect_uris": nil})}, "1 to 10 redirect URIs"},
		{"not JSON", "/g.json", docPage{body: "<html>hello</html>"}, "not one JSON object"},
		{"two JSON values", "/h.json", docPage{body: docJSON(nil) + "{}"}, "not one JSON object"},
		{"over 5 KB", "/i.json", docPage{body: docJSON(map[string]any{"client_name": strings.Repeat("n", grants.MaxDocument)})}, "longer than 5120 bytes"},
		{"a redirect", "/j.json", docPage{status: http.StatusFound, header: http.Header{"Location": {"https://example.com/a.json"}}}, "answered 302"},
		{"not found", "/k.json", docPage{status: http.StatusNotFound}, "answered 404"},
		{"too slow", "/l.json", docPage{delay: 3 * time.Second, body: docJSON(nil)}, "could not fetch"},
		{"the box itself", "/m.json", docPage{body: docJSON(map[string]any{"redirect_uris": []string{redirect, f.base + "/s/garden/"}})}, "this box's own address"},
	}
	for _, c := range cases {
		f.clock.Advance(time.Minute) // within the budget of fetches from one host
		id := "https://example.com" + c.path
		page := c.page
		if page.body != "" {
			page.body = strings.Replace(page.body, docID, id, 1)
		}
		f.docs.page(c.path, page)
		q, _ := f.docQuery(id, redirect)
		st, loc, out := f.authorize(q)
		if st < 400 || st >= 500 || loc.String() != "" || !strings.Contains(out["error_description"].(string), c.want) {
			t.Errorf("%s: %d %v %v", c.name, st, loc, out)
		}
	}
	if n := f.docs.count("/a.json"); n != 1 { // fetched directly once, and never through the 302 of /j.json
		t.Errorf("/a.json fetched %d times", n)
	}
	// An error is answered again for a minute without a fetch; then the corrected document works.
	f.docs.page("/k.json", docPage{body: docJSON(map[string]any{"client_id": "https://example.com/k.json"})})
	q, _ := f.docQuery("https://example.com/k.json", redirect)
	f.clock.Advance(grants.DocumentFailureLife + time.Second)
	if st, loc, out := f.authorize(q); st != http.StatusFound || loc.Path != oauth.ConsentPath {
		t.Fatalf("the corrected document: %d %v %v", st, loc, out)
	}
	// client_id URLs the draft does not allow are never fetched.
	for _, id := range []string{"https://example.com/", "https://example.com", "https://example.com/a/../z.json", "https://example.com/./z.json",
		"https://user@example.com/z.json", "https://example.com/z.json#x", "https://example.com/" + strings.Repeat("z", grants.MaxParam)} {
		q, _ := f.docQuery(id, redirect)
		if st, loc, out := f.authorize(q); st != 401 && st != 400 || loc.String() != "" || (out["error"] != "invalid_client" && out["error"] != "invalid_request") {
			t.Errorf("client_id %q: %d %v %v", id, st, loc, out)
		}
	}
	if f.docs.count("/") != 0 || f.docs.count("/z.json") != 0 || f.docs.count("/a/../z.json") != 0 || f.docs.count("/./z.json") != 0 {
		t.Fatal("a client_id URL the draft does not allow was fetched")
	}
}

// The box never fetches a document from a private, loopback, link-local or metadata address, whether the
// client_id names it by number or by a name that resolves there, or rebinds there after a first fetch;
// the test network records any such dial, and none happens.
func TestClientIDMetadataDocumentSSRF(t *testing.T) {
	f := newFx(t)
	redirect := "http://127.0.0.1:4000/callback"
	for name, addr := range map[string]string{"inside.example.com": "10.0.0.5", "meta.example.com": "169.254.169.254",
		"loop.example.com": "127.0.0.1", "v6.example.com": "fd00:ec2::254", "mapped.example.com": "::ffff:192.168.1.1",
		"cgnat.example.com": "100.100.100.200", "link6.example.com": "fe80::1"} {
		f.docs.Name(name, addr)
	}
	for _, id := range []string{"https://inside.example.com/c.json", "https://meta.example.com/latest/meta-data/c.json",
		"https://loop.example.com/c.json", "https://v6.example.com/c.json", "https://mapped.example.com/c.json",
		"https://cgnat.example.com/c.json", "https://link6.example.com/c.json", "https://169.254.169.254/latest/meta-data/c.json",
		"https://127.0.0.1:9/c.json", "https://[::1]/c.json", "https://10.0.0.1/c.json", "https://[fd00:ec2::254]/c.json"} {
		q, _ := f.docQuery(id, redirect)
		st, loc, out := f.authorize(q)
		if st != 401 || loc.String() != "" || out["error"] != "invalid_client" || !strings.Contains(out["error_description"].(string), "not on the public internet") {
			t.Errorf("%s: %d %v %v", id, st, loc, out)
		}
	}
	// DNS rebinding: example.com served the document once; when its copy is stale and the name now
	// answers a private address, the box refuses before it connects.
	f.docs.page("/oauth/client.json", docPage{header: http.Header{"Cache-Control": {"max-age=60"}}, body: docJSON(nil)})
	q, _ := f.docQuery(docID, redirect)
	if st, loc, out := f.authorize(q); st != http.StatusFound || loc.Path != oauth.ConsentPath {
		t.Fatalf("the first fetch: %d %v %v", st, loc, out)
	}
	f.docs.Name("example.com", "192.168.0.1")
	f.clock.Advance(61 * time.Second)
	if st, loc, out := f.authorize(q); st != 401 || loc.String() != "" || !strings.Contains(out["error_description"].(string), "not on the public internet") {
		t.Fatalf("after rebinding: %d %v %v (fetched %d)", st, loc, out, f.docs.count("/oauth/client.json"))
	}
	if r := f.docs.Refused(); len(r) != 0 {
		t.Fatalf("the box dialled %v", r)
	}
}

// Fetching documents is bounded: a failure is answered from memory for a minute, one host is fetched at
// most DocumentFetchesPerHost times a minute, one network may cause DocumentFetchesPerSource fetches an
// hour, the box makes DocumentFetchesPerMinute in all, and at most DocumentFetchesInFlight at once. A
// client already known keeps its stored copy when only the budget refuses.
func TestClientIDMetadataDocumentFetchBudget(t *testing.T) {
	f := newFx(t, func(s *server.Server) { s.AllowedHosts = []string{"box.example.com"} })
	redirect := "http://127.0.0.1:4000/callback"
	authorize := func(from, id string) (int, map[string]any) {
		t.Helper()
		q, _ := f.docQuery(id, redirect)
		q.Set("resource", "http://box.example.com/mcp")
		req, _ := http.NewRequest("GET", f.base+oauth.AuthorizePath+"?"+q.Encode(), nil)
		req.Host = "box.example.com"
		req.Header.Set("X-Forwarded-For", from)
		return f.do(req)
	}
	host := func(name string) string {
		f.docs.Name(name, egresstest.Public.String())
		return "https://" + name
	}

	// A failure is remembered for a minute: asked again, the box answers it without fetching.
	gone := host("gone.example.com") + "/c.json"
	for range 3 {
		if st, out := authorize("198.51.100.1", gone); st != 401 || !strings.Contains(fmt.Sprint(out["error_description"]), "answered 404") {
			t.Fatalf("a missing document: %d %v", st, out)
		}
	}
	if n := f.docs.count("/c.json"); n != 1 {
		t.Fatalf("a failed document was fetched %d times in a minute", n)
	}
	f.clock.Advance(grants.DocumentFailureLife + time.Second)
	authorize("198.51.100.1", gone)
	if n := f.docs.count("/c.json"); n != 2 {
		t.Fatalf("after a minute the document was fetched %d times in all, want 2", n)
	}

	// One host: DocumentFetchesPerHost a minute, whoever asks; another host is not held up.
	f.clock.Advance(time.Hour)
	victim := host("victim.example.com")
	for i := range grants.DocumentFetchesPerHost {
		authorize(fmt.Sprintf("203.0.%d.1", i), fmt.Sprintf("%s/v%d.json", victim, i))
	}
	st, out := authorize("203.0.200.1", victim+"/over.json")
	if st != 429 || out["error"] != "temporarily_unavailable" || f.docs.count("/over.json") != 0 {
		t.Fatalf("fetch %d from one host in a minute: %d %v (fetched %d)", grants.DocumentFetchesPerHost+1, st, out, f.docs.count("/over.json"))
	}
	f.docs.page("/other.json", docPage{body: strings.Replace(docJSON(nil), docID, host("other.example.com")+"/other.json", 1)})
	if st, out := authorize("203.0.201.1", "https://other.example.com/other.json"); st != http.StatusFound {
		t.Fatalf("another host: %d %v", st, out)
	}
	f.clock.Advance(time.Minute)
	authorize("203.0.202.1", victim+"/over.json")
	if f.docs.count("/over.json") != 1 {
		t.Fatal("a minute later the host is not fetched again")
	}

	// One network: DocumentFetchesPerSource an hour, across hosts; another network is not held up.
	f.clock.Advance(time.Hour)
	for i := range grants.DocumentFetchesPerSource {
		authorize("192.0.2.7", fmt.Sprintf("%s/s%d.json", host(fmt.Sprintf("s%d.example.com", i)), i))
	}
	st, out = authorize("192.0.2.99", host("fresh.example.com")+"/src.json")
	if st != 429 || out["error"] != "temporarily_unavailable" || f.docs.count("/src.json") != 0 {
		t.Fatalf("fetch %d from one network in an hour: %d %v", grants.DocumentFetchesPerSource+1, st, out)
	}
	authorize("192.0.3.7", "https://fresh.example.com/src.json")
	if f.docs.count("/src.json") != 1 {
		t.Fatal("another network's fetch was refused")
	}

	// In all: DocumentFetchesPerMinute, from any number of networks and hosts. A client already known
	// keeps its stored copy meanwhile.
	f.clock.Advance(time.Hour)
	known := "https://other.example.com/other.json"
	f.clock.Advance(grants.DocumentMaxLife) // its copy is stale: it would be fetched again
	for i := range grants.DocumentFetchesPerMinute {
		authorize(fmt.Sprintf("10.%d.0.1", i), fmt.Sprintf("%s/a%d.json", host(fmt.Sprintf("a%d.example.com", i)), i))
	}
	st, out = authorize("172.16.0.1", host("last.example.com")+"/all.json")
	if st != 429 || out["error"] != "temporarily_unavailable" || f.docs.count("/all.json") != 0 {
		t.Fatalf("fetch %d in a minute: %d %v", grants.DocumentFetchesPerMinute+1, st, out)
	}
	before := f.docs.count("/other.json")
	if st, out := authorize("172.16.0.2", known); st != http.StatusFound || f.docs.count("/other.json") != before {
		t.Fatalf("a known client while the budget is spent: %d %v", st, out)
	}

	// At most DocumentFetchesInFlight at once; the others wait for a slot and then go through.
	f.clock.Advance(time.Hour)
	hold := make(chan struct{})
	var wg sync.WaitGroup
	results := make(chan int, 2*grants.DocumentFetchesInFlight)
	for i := range 2 * grants.DocumentFetchesInFlight {
		id := fmt.Sprintf("%s/w%d.json", host(fmt.Sprintf("w%d.example.com", i)), i)
		f.docs.page(fmt.Sprintf("/w%d.json", i), docPage{hold: hold, body: strings.Replace(docJSON(nil), docID, id, 1)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _ := authorize(fmt.Sprintf("100.%d.0.1", i), id)
			results <- st
		}()
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) { // generous: a loaded machine
		f.docs.mu.Lock()
		n := f.docs.inflight
		f.docs.mu.Unlock()
		if n == grants.DocumentFetchesInFlight {
			break
		}
	}
	time.Sleep(200 * time.Millisecond) // room for a fetch past the bound to show up
	close(hold)
	wg.Wait()
	close(results)
	for st := range results {
		if st != http.StatusFound {
			t.Errorf("a fetch that waited for its slot: %d", st)
		}
	}
	f.docs.mu.Lock()
	most := f.docs.maxInflight
	f.docs.mu.Unlock()
	if most != grants.DocumentFetchesInFlight {
		t.Fatalf("%d fetches at once, want %d", most, grants.DocumentFetchesInFlight)
	}
	if r := f.docs.Refused(); len(r) != 0 {
		t.Fatalf("the box dialled %v", r)
	}
}
