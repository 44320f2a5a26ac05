package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/oauth"
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
// once it is right, the next request works at once.
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
	}
	for _, c := range cases {
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
	// Errors are not cached: the corrected document works on the next request.
	f.docs.page("/k.json", docPage{body: docJSON(map[string]any{"client_id": "https://example.com/k.json"})})
	q, _ := f.docQuery("https://example.com/k.json", redirect)
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
