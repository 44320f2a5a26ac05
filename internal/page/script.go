package page

import (
	"errors"
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/css"
	"github.com/boxmem/box/internal/js"
	"golang.org/x/net/html"
)

// Why a page can't have what was found: each says what to do instead.
const (
	whyNetwork  = "a page can't reach the internet: put what it needs inside the file (images and fonts as data: addresses, icons as emoji or inline SVG)"
	whyRelative = "nothing is served beside a page: put it inside the file, link within the page with #name, or open the box's own tabs with box.ui.open"
	whyScheme   = "a page may only use #name, data:, mailto: and tel: addresses"
	whyDataNav  = "a page can't open another document: show it inside this page"
	whyFrame    = "a page can't hold other pages, frames or plug-ins: build it into this page"
	// The bridge's guard watches every shadow root a script makes; one the markup declares (closed, it
	// is out of every script's reach) would be out of the guard's reach too.
	whyDeclarativeShadow = "a page makes its shadow roots with attachShadow(), not in its markup"
	whyBase              = "a page can't change where its addresses point"
	whyRefresh           = "a page can't reload or move itself"
	whyHTTPEquiv         = "a page can't set its own HTTP headers"
	whyLink              = "a page is one file: put styles in <style>, scripts in <script>, and an icon as a data: address"
	whyScriptSrc         = "a page is one file: put the script between <script> and </script>"
	whyScriptType        = "a page is one file: it has no modules to map and nothing to prerender"
	whyImport            = "a page is one file: nothing can be imported into it"
	whyConnection        = "a page can't open connections of its own: its only door is the box object (box.memory, box.data …)"
	whyWorker            = "a page can't start workers or load code from elsewhere: run the code in the page itself"
	whyWindow            = "a page can't open windows or other screens"
	whyMakeFrame         = "a page can't make frames or plug-ins, from a script either"
	whyAnimateHref       = "an SVG animation can't change an address"
	whyUnreadable        = "the checker can't read this script (%s): a page's scripts must be complete, plain JavaScript"
	whyCSSImport         = "a page is one file: put the styles in <style>"
	whyExpression        = "a style can't run code"
	whyBadURL            = "this url( can't be read: write url(data:…) or url(#name)"
)

// refusedNames are the names a script may not use, with why: the APIs that open connections, start
// workers or open windows. A name refused here is also removed at run time by the bridge's guard
// (bridge.js); the list in docs/PAGES.md is the same.
var refusedNames = map[string]string{
	"WebSocket": whyConnection, "WebSocketStream": whyConnection, "WebTransport": whyConnection,
	"EventSource": whyConnection, "sendBeacon": whyConnection, "RTCPeerConnection": whyConnection,
	"webkitRTCPeerConnection": whyConnection, "mozRTCPeerConnection": whyConnection, "RTCDataChannel": whyConnection,
	"PresentationRequest": whyWindow, "showModalDialog": whyWindow,
	"Worker": whyWorker, "SharedWorker": whyWorker, "serviceWorker": whyWorker, "ServiceWorker": whyWorker,
	"importScripts": whyWorker, "Worklet": whyWorker, "paintWorklet": whyWorker, "audioWorklet": whyWorker,
	"animationWorklet": whyWorker, "layoutWorklet": whyWorker, "AudioWorklet": whyWorker, "AudioWorkletNode": whyWorker,
	"addModule": whyWorker,
}

// windowNames are the names of the page's window: "<name>.open" opens a window.
var windowNames = map[string]bool{"window": true, "self": true, "globalThis": true, "top": true, "parent": true, "frames": true, "opener": true}

// frameTags are the elements a script may not make (createElement) or write into markup.
var frameTags = []string{"iframe", "frame", "frameset", "object", "embed", "applet", "portal", "fencedframe", "base"}

func refusedName(name string) (string, bool) {
	if why, ok := refusedNames[name]; ok {
		return why, true
	}
	for _, p := range []string{"RTC", "webkitRTC", "mozRTC"} {
		if strings.HasPrefix(name, p) {
			return whyConnection, true
		}
	}
	return "", false
}

// javaScriptTypes are the MIME types a browser runs as a classic script (HTML "JavaScript MIME type").
var javaScriptTypes = map[string]bool{"application/ecmascript": true, "application/javascript": true,
	"application/x-ecmascript": true, "application/x-javascript": true, "text/ecmascript": true,
	"text/javascript": true, "text/javascript1.0": true, "text/javascript1.1": true, "text/javascript1.2": true,
	"text/javascript1.3": true, "text/javascript1.4": true, "text/javascript1.5": true, "text/jscript": true,
	"text/livescript": true, "text/x-ecmascript": true, "text/x-javascript": true}

// scriptKind reads a script element's type as HTML's "prepare the script element" does.
func scriptKind(n *html.Node) string {
	t, hasType := attr(n, "type")
	if !hasType {
		if lang, ok := attr(n, "language"); ok && lang != "" {
			t, hasType = "text/"+lang, true
		}
	}
	t = strings.ToLower(strings.TrimSpace(t))
	switch {
	case !hasType || t == "" || javaScriptTypes[t]:
		return "classic"
	case t == "module", t == "importmap", t == "speculationrules":
		return t
	}
	return "data"
}

func (c *checker) scriptElement(n *html.Node, tag, line int) {
	if src, ok := attr(n, "src"); ok {
		found := "<script src>"
		if a := classify(src); a.kind == addrNetwork {
			found = a.host
		}
		c.add(Problem{Line: line, Found: found, Where: "<script src>", Why: whyScriptSrc})
	}
	text := childText(n)
	start := c.loc.textLine(tag, text)
	switch kind := scriptKind(n); kind {
	case "classic", "module":
		c.script(text, kind == "module", start, "a <script>")
	case "importmap", "speculationrules":
		c.add(Problem{Line: line, Found: `<script type="` + kind + `">`, Where: "the page", Why: whyScriptType})
	default: // a data block: never run, but what it holds ends up somewhere
		c.generic(text, func() int { return start }, "a data <script>")
	}
}

// script applies the script rules of docs/PAGES.md to JavaScript source that starts on line start.
func (c *checker) script(src string, module bool, start int, where string) {
	at := func(l int) int {
		if start == 0 {
			return 0
		}
		return start + l - 1
	}
	toks, err := js.Tokenize(src, js.Options{Module: module})
	if err != nil {
		line := 0
		var e *js.Error
		if errors.As(err, &e) {
			line = at(e.Line)
		}
		c.add(Problem{Line: line, Found: "an unreadable script", Where: where, Why: fmt.Sprintf(whyUnreadable, err)})
	}
	prev := func(i, back int) js.Token {
		if i-back >= 0 {
			return toks[i-back]
		}
		return js.Token{}
	}
	next := func(i int) js.Token {
		if i+1 < len(toks) {
			return toks[i+1]
		}
		return js.Token{}
	}
	isPunct := func(t js.Token, v string) bool { return t.Kind == js.Punct && t.Value == v }
	for i, t := range toks {
		line := at(t.Line)
		switch t.Kind {
		case js.Ident:
			property := isPunct(prev(i, 1), ".") || isPunct(prev(i, 1), "?.")
			switch {
			case t.Value == "import" && !property:
				c.importUse(toks, i, line, where)
			case t.Value == "from" && next(i).Kind == js.String:
				c.add(Problem{Line: line, Found: "from " + moduleName(next(i).Value), Where: where, Why: whyImport})
			case t.Value == "open" && property && prev(i, 2).Kind == js.Ident && windowNames[prev(i, 2).Value]:
				c.add(Problem{Line: line, Found: prev(i, 2).Value + ".open", Where: where, Why: whyWindow})
			case (t.Value == "createElement" || t.Value == "createElementNS") && isPunct(next(i), "("):
				c.createElement(toks, i, line, where)
			default:
				if why, ok := refusedName(t.Value); ok {
					found := t.Value
					if p := prev(i, 1); p.Kind == js.Ident && p.Value == "new" {
						found = "new " + found
					}
					c.add(Problem{Line: line, Found: found, Where: where, Why: why})
				}
			}
		case js.String, js.Template:
			c.scriptText(t.Value, line, where)
		}
	}
}

// importUse: import.meta is fine; import(…) and import "x" load code.
func (c *checker) importUse(toks []js.Token, i, line int, where string) {
	if i+1 >= len(toks) {
		c.add(Problem{Line: line, Found: "import", Where: where, Why: whyImport})
		return
	}
	switch n := toks[i+1]; {
	case n.Kind == js.Punct && n.Value == ".":
	case n.Kind == js.Punct && n.Value == "(":
		found := "import("
		if i+2 < len(toks) && toks[i+2].Kind == js.String {
			found = "import(" + moduleName(toks[i+2].Value) + ")"
		}
		c.add(Problem{Line: line, Found: found, Where: where, Why: whyImport})
	case n.Kind == js.String:
		c.add(Problem{Line: line, Found: "import " + moduleName(n.Value), Where: where, Why: whyImport})
	default: // import x from "y": reported at its "from"; without one it is no import a browser runs
		if !importHasFrom(toks[i+1:]) {
			c.add(Problem{Line: line, Found: "import", Where: where, Why: whyImport})
		}
	}
}

func importHasFrom(rest []js.Token) bool {
	for k, t := range rest {
		if k > 64 || (t.Kind == js.Punct && t.Value == ";") {
			return false
		}
		if t.Kind == js.Ident && t.Value == "from" && k+1 < len(rest) && rest[k+1].Kind == js.String {
			return true
		}
	}
	return false
}

// moduleName shows a module specifier: the host of an address, else the specifier quoted.
func moduleName(spec string) string {
	if a := classify(spec); a.kind == addrNetwork {
		return a.host
	}
	return fmt.Sprintf("%q", spec)
}

func (c *checker) createElement(toks []js.Token, i, line int, where string) {
	arg := i + 2
	if toks[i].Value == "createElementNS" { // (namespace, name)
		arg = i + 4
	}
	if arg >= len(toks) || toks[arg].Kind != js.String {
		return
	}
	name := strings.ToLower(strings.TrimSpace(toks[arg].Value))
	for _, f := range frameTags {
		if name == f {
			c.add(Problem{Line: line, Found: fmt.Sprintf("%s(%q)", toks[i].Value, toks[arg].Value), Where: where, Why: whyMakeFrame})
		}
	}
}

// scriptText checks a string or template piece: an address elsewhere, a refused API named in a string
// (window["WebSocket"]), markup for a frame.
func (c *checker) scriptText(v string, line int, where string) {
	if host, ok := findNetworkAddress(v); ok {
		c.add(Problem{Line: line, Found: host, Where: where, Why: whyNetwork})
	}
	if why, ok := refusedName(strings.TrimSpace(v)); ok {
		c.add(Problem{Line: line, Found: fmt.Sprintf("%q", strings.TrimSpace(v)), Where: where, Why: why})
	}
	lower := asciiLower(v)
	for _, f := range frameTags {
		for from := 0; ; {
			k := strings.Index(lower[from:], "<"+f)
			if k < 0 {
				break
			}
			end := from + k + 1 + len(f)
			if end == len(lower) || strings.IndexByte(" \t\n\f/>", lower[end]) >= 0 {
				c.add(Problem{Line: line, Found: "<" + f + ">", Where: where, Why: whyMakeFrame})
				break
			}
			from = end
		}
	}
}

func cssOf(src string) []css.Node { return css.Components(src) }

// style applies the style rules of docs/PAGES.md to CSS that starts on line start.
func (c *checker) style(nodes []css.Node, start int, where string) {
	at := func(l int) int {
		if start == 0 {
			return 0
		}
		return start + l - 1
	}
	css.Walk(nodes, func(n css.Node) bool {
		line := at(n.Line)
		switch n.Type {
		case css.URL:
			c.cssAddress(n.Value, line, where)
		case css.BadURL:
			c.add(Problem{Line: line, Found: "url(", Where: where, Why: whyBadURL})
		case css.AtKeyword:
			if strings.EqualFold(n.Value, "import") {
				c.add(Problem{Line: line, Found: "@import", Where: where, Why: whyCSSImport})
			}
		case css.String:
			if host, ok := findNetworkAddress(n.Value); ok {
				c.add(Problem{Line: line, Found: host, Where: where, Why: whyNetwork})
			}
		case css.Function:
			switch strings.ToLower(n.Value) {
			case "url", "src": // url("…") and src("…") take their address as a string
				s, ok := firstString(n.Children)
				if !ok {
					c.add(Problem{Line: line, Found: n.Value + "(", Where: where, Why: whyBadURL})
				}
				c.cssAddress(s, line, where)
				return false
			case "image-set", "-webkit-image-set": // a bare string here is an address
				for _, ch := range n.Children {
					if ch.Type == css.String {
						c.cssAddress(ch.Value, at(ch.Line), where)
					}
				}
			case "expression":
				c.add(Problem{Line: line, Found: "expression(", Where: where, Why: whyExpression})
			}
		}
		return true
	})
}

func firstString(ns []css.Node) (string, bool) {
	for _, n := range ns {
		switch n.Type {
		case css.Whitespace:
		case css.String:
			return n.Value, true
		default:
			return "", false
		}
	}
	return "", false
}

// cssAddress: a style may point at data: and at #name; nothing else.
func (c *checker) cssAddress(v string, line int, where string) {
	switch a := classify(v); a.kind {
	case addrEmpty, addrFragment, addrData:
	case addrNetwork:
		c.add(Problem{Line: line, Found: "url(" + a.host, Where: where, Why: whyNetwork})
	case addrRelative:
		c.add(Problem{Line: line, Found: "url(" + strings.TrimSpace(v), Where: where, Why: whyRelative})
	default:
		c.add(Problem{Line: line, Found: "url(" + a.scheme + ":", Where: where, Why: whyScheme})
	}
}
