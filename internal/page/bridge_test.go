package page

import (
	"bytes"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

var testBridge = Bridge{Box: "https://box.example", Slug: "garden", Version: 3, Token: "tok_0123456789abcdef"}

func TestInject(t *testing.T) {
	script, err := testBridge.Script()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, page, want string }{
		{"after head", "<!doctype html><html lang=en><head><meta charset=utf-8><script>x()</script>", "<!doctype html><html lang=en><head>" + script + "<meta charset=utf-8><script>x()</script>"},
		{"head with attributes", "<!-- c -->\n<HTML>\n<Head data-x=\"1\">\n<title>t</title>", "<!-- c -->\n<HTML>\n<Head data-x=\"1\">" + script + "\n<title>t</title>"},
		{"no head", "<!doctype html><title>t</title><script>x()</script>", "<!doctype html><head>" + script + "<title>t</title><script>x()</script>"},
		{"no html or head", "<p>hi", "<head>" + script + "<p>hi"},
		{"script before html", "<!doctype html><script>x()</script><html><head>", "<!doctype html><head>" + script + "<script>x()</script><html><head>"},
		{"body first", "<html><body onload=x()><head>", "<html><head>" + script + "<body onload=x()><head>"},
		{"byte order mark", "\ufeff<!doctype html><p>x", "\ufeff<!doctype html><head>" + script + "<p>x"},
		{"garden", string(garden(t)), strings.Replace(string(garden(t)), "<head>", "<head>"+script, 1)},
	} {
		out, err := Inject([]byte(c.page), testBridge)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(out) != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, out, c.want)
		}
		if !bytes.Equal(bytes.Replace(out, []byte(script), nil, 1), []byte(strings.Replace(c.want, script, "", 1))) {
			t.Errorf("%s: the page's own bytes changed", c.name)
		}
	}
}

func TestScriptConfig(t *testing.T) {
	s, err := testBridge.Script()
	if err != nil {
		t.Fatal(err)
	}
	cfg := `{"api":"/api/sections/garden/","origin":"https://box.example","slug":"garden","token":"tok_0123456789abcdef","version":3}`
	if !strings.Contains(s, "const cfg = "+cfg+";") || strings.Contains(s, configMark) {
		t.Errorf("the configuration is not in the script:\n%s", s[:300])
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(s, "<script>"), "</script>")
	if l := strings.ToLower(inner); strings.Contains(l, "</script") || strings.Contains(l, "<!--") || strings.Contains(l, "<script") {
		t.Error("the bridge holds markup that would end or change its <script> element")
	}
	if strings.Count(bridgeJS, configMark) != 1 {
		t.Errorf("bridge.js holds %d configuration marks, want 1", strings.Count(bridgeJS, configMark))
	}
}

func TestBridgeRefusesBadValues(t *testing.T) {
	for name, b := range map[string]Bridge{
		"address with a path": {Box: "https://box.example/x", Slug: "a", Version: 1, Token: testBridge.Token},
		"address in quotes":   {Box: "https://box.example'", Slug: "a", Version: 1, Token: testBridge.Token},
		"no scheme":           {Box: "box.example", Slug: "a", Version: 1, Token: testBridge.Token},
		"slug":                {Box: "https://box.example", Slug: "../x", Version: 1, Token: testBridge.Token},
		"version":             {Box: "https://box.example", Slug: "a", Version: 0, Token: testBridge.Token},
		"short token":         {Box: "https://box.example", Slug: "a", Version: 1, Token: "abc"},
		"token with a quote":  {Box: "https://box.example", Slug: "a", Version: 1, Token: "abcdefghijklmnop\""},
	} {
		if _, err := Inject([]byte("<p>x"), b); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: Inject = %v, want Invalid", name, err)
		}
	}
}

func TestCheckSlug(t *testing.T) {
	for _, s := range []string{"garden", "a", "habits-2", "x1-y2-z3"} {
		if err := CheckSlug(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "Garden", "1a", "a-", "a--b", "a_b", "a/b", strings.Repeat("a", 41), "é"} {
		if err := CheckSlug(s); !errs.Is(err, errs.Invalid) {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestHeaders(t *testing.T) {
	h, err := Headers("https://Box.Example:8443/")
	if err != nil {
		t.Fatal(err)
	}
	want := "sandbox allow-scripts allow-forms; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
		"img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'self' https://box.example:8443; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
	if got := h.Get("Content-Security-Policy"); got != want {
		t.Errorf("CSP\n got %s\nwant %s", got, want)
	}
	pp := h.Get("Permissions-Policy")
	for _, f := range []string{"camera=()", "microphone=()", "geolocation=()", "payment=()", "publickey-credentials-get=()", "publickey-credentials-create=()", "usb=()"} {
		if !strings.Contains(pp, f) {
			t.Errorf("Permissions-Policy lacks %s: %s", f, pp)
		}
	}
	if h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers: %v", h)
	}
	for _, bad := range []string{"", "ftp://box", "https://user@box", "https://box?x", "https://box#x", "https://box; script-src *", "https://*.box"} {
		if _, err := Headers(bad); !errs.Is(err, errs.Invalid) {
			t.Errorf("Headers(%q) = %v, want Invalid", bad, err)
		}
	}
}
