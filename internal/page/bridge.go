package page

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"golang.org/x/net/html"
)

//go:embed bridge.js
var bridgeJS string

// configMark is where bridge.js takes its configuration.
const configMark = "/*BOX_CONFIG*/ {}"

// Bridge is what the bridge of one served page knows.
type Bridge struct {
	Box     string // the box's own address, as for Headers: where ui.open messages go
	Slug    string // the page's slug: its API is /api/sections/<slug>/
	Version int    // the installed version being served, posted with the heartbeat
	Token   string // the page's own token, sent as x-section-token
}

// APIPath is the root of a page's routes (docs/PAGES.md, "The bridge's routes").
func APIPath(slug string) string { return "/api/sections/" + slug + "/" }

// Script is the bridge as a <script> element, configured for one page.
func (b Bridge) Script() (string, error) {
	origin, err := Origin(b.Box)
	if err != nil {
		return "", err
	}
	if err := CheckSlug(b.Slug); err != nil {
		return "", err
	}
	if b.Version < 1 {
		return "", errs.E("page.bridge", errs.Invalid, "A page's version starts at 1, not %d.", b.Version)
	}
	if !validToken(b.Token) {
		return "", errs.E("page.bridge", errs.Invalid, "A page's token is 16 to 256 letters, digits, '-', '_', '.' or '~'.")
	}
	// encoding/json escapes <, >, &, U+2028 and U+2029, so nothing in the values can end the script.
	cfg, err := json.Marshal(map[string]any{"slug": b.Slug, "version": b.Version, "token": b.Token,
		"api": APIPath(b.Slug), "origin": origin})
	if err != nil {
		return "", errs.Wrap("page.bridge", errs.Other, err, "")
	}
	return "<script>" + strings.Replace(bridgeJS, configMark, string(cfg), 1) + "</script>", nil
}

func validToken(t string) bool {
	if len(t) < 16 || len(t) > 256 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(isLetter(c) || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}

// CheckSlug refuses a page slug that is not 1 to 40 lower-case letters, digits and single hyphens,
// starting with a letter: it names the page's folder, its map (moc-<slug>) and its address (/s/<slug>/).
func CheckSlug(s string) error {
	ok := len(s) >= 1 && len(s) <= 40 && s[0] >= 'a' && s[0] <= 'z' && !strings.HasSuffix(s, "-") && !strings.Contains(s, "--")
	for i := 0; ok && i < len(s); i++ {
		ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'
	}
	if !ok {
		return errs.E("page.slug", errs.Invalid, "The page name %q can't be used: use 1 to 40 lower-case letters, digits and single hyphens, starting with a letter (like \"garden\").", Clip(s))
	}
	return nil
}

// Inject puts the bridge at the start of the page's <head>, before anything of the page's own can run,
// and leaves every other byte as it was. Where the page has no <head> tag before its content, a <head>
// tag comes with the bridge (the one the parser would have implied). The result is parsed again: its
// first script must be the bridge, inside <head>, or nothing is served.
func Inject(src []byte, b Bridge) ([]byte, error) {
	script, err := b.Script()
	if err != nil {
		return nil, err
	}
	at, hasHead := insertionPoint(src)
	insert := script
	if !hasHead {
		insert = "<head>" + script
	}
	out := make([]byte, 0, len(src)+len(insert))
	out = append(append(append(out, src[:at]...), insert...), src[at:]...)
	if err := bridgeFirst(out, script); err != nil {
		return nil, err
	}
	return out, nil
}

// insertionPoint skips what may come before <head>: a byte order mark, white space, comments, the
// doctype and the <html> tag. It returns the offset after a <head> tag found there, or where the first
// other token starts.
func insertionPoint(src []byte) (int, bool) {
	z := html.NewTokenizer(bytes.NewReader(src))
	off := 0
	for {
		tt := z.Next()
		raw := len(z.Raw())
		switch tt {
		case html.ErrorToken:
			return off, false
		case html.DoctypeToken, html.CommentToken:
		case html.TextToken:
			if strings.Trim(string(z.Text()), " \t\n\f\r\ufeff") != "" {
				return off, false
			}
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "html":
			case "head":
				return off + raw, true
			default:
				return off, false
			}
		default:
			return off, false
		}
		off += raw
	}
}

// bridgeFirst parses the page as a browser will and checks that the first script is the bridge, in <head>.
func bridgeFirst(page []byte, script string) error {
	doc, err := html.Parse(bytes.NewReader(bytes.TrimPrefix(page, []byte("\ufeff")))) // as the browser's decoder does
	if err != nil {
		return errs.Wrap("page.inject", errs.Other, err, "")
	}
	want := strings.TrimSuffix(strings.TrimPrefix(script, "<script>"), "</script>")
	first := firstScript(doc)
	if first == nil || first.Parent == nil || first.Parent.Data != "head" || childText(first) != want {
		return errs.E("page.inject", errs.Invalid, "The page can't be served: the box's bridge would not run before its own scripts; send the page again with a plain <head>.")
	}
	return nil
}

func firstScript(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && strings.EqualFold(n.Data, "script") {
		return n
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if s := firstScript(ch); s != nil {
			return s
		}
	}
	return nil
}
