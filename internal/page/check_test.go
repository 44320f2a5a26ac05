package page

import (
	"os"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

func garden(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/garden.html")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGardenPasses(t *testing.T) {
	if ps := Problems(garden(t)); len(ps) != 0 {
		t.Fatalf("the Garden page of docs/PAGES.md is refused: %v", ps)
	}
	if err := Check(garden(t)); err != nil {
		t.Fatal(err)
	}
}

// TestAllowed: pages that use what a page may use pass.
func TestAllowed(t *testing.T) {
	for name, src := range map[string]string{
		"inline svg with namespaces": `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 1 1"><defs><linearGradient id="g"/></defs><rect fill="url(#g)"/><use xlink:href="#g"/></svg>`,
		"data images and fonts": `<style>@font-face{font-family:x;src:url(data:font/woff2;base64,AAAA) format("woff2")}.a{background:url("data:image/png;base64,iVBO")}</style>` +
			`<img src="data:image/png;base64,iVBO" srcset="data:image/png;base64,AA,BB 1x, data:image/png;base64,CC 2x"><video poster="data:image/png,x"></video><link rel="icon" href="data:image/svg+xml,%3Csvg%3E">`,
		"links inside the page":     `<a href="#top">top</a><a href="mailto:me@example.com">mail</a><a href="tel:+123">call</a><form action=""><button formaction="">x</button></form>`,
		"text that names addresses": `<p>My site is https://example.com and //not-a-link</p><textarea>https://x.example</textarea>`,
		"scripts with look-alikes": "<script>\n// new WebSocket in a comment\n/* EventSource */\nconst s = 'a Worker shifts'; const r = /'/g; const q = `${s} and https: here`;\n" +
			"if (s) /`/.test(s);\nconst o = {a: 1} / 2; x.import = 1; const u = import.meta; label.open = true; const worker = 1; obj.Worker2 = 3;\n</script>",
		"a module":          `<script type="module">export const a = 1; const b = a <!--c;</script>`,
		"a json data block": `<script type="application/json">{"x": "plain text"}</script>`,
		"harmless meta":     `<meta charset="utf-8"><meta http-equiv="Content-Type" content="text/html; charset=utf-8"><meta name="viewport" content="width=device-width">`,
		"event handlers":    `<button onclick="box.todos.add('milk').then(r => out.textContent = r.text)">Add</button>`,
		"javascript: link":  `<a href="javascript:void(0)">x</a>`,
		"svg animation":     `<svg><animate attributeName="opacity" from="0" to="1" dur="1s"/></svg>`,
		"template content":  `<template id="row"><li class="x">a</li></template>`,
	} {
		if ps := Problems([]byte(src)); len(ps) != 0 {
			t.Errorf("%s: refused: %v", name, ps)
		}
	}
}

// TestRefused: each case holds one thing a page can't have; the problem names it and its line.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		name, src, found string
		line             int
	}{
		{"script from a CDN", "<p>x</p>\n<script src=\"https://cdn.example.com/lib.js\"></script>", "cdn.example.com", 2},
		{"script from beside the page", `<script src="lib.js"></script>`, "<script src>", 1},
		{"scheme-relative image", "<img\n  alt=x\n  src=\"//img.example.com/a.png\">", "img.example.com", 3},
		{"backslash image", `<img src="\\img.example.com/a.png">`, "img.example.com", 1},
		{"tab inside a scheme", "<img src=\"ht\ttps://cdn.example.com/x\">", "cdn.example.com", 1},
		{"http without slashes", `<img src="http:cdn.example.com/x">`, "cdn.example.com", 1},
		{"relative image", `<img src="/api/sections/other/data">`, "/api/sections/other/data", 1},
		{"blob image", `<img src="blob:https://box/1">`, "blob:", 1},
		{"srcset", `<img srcset="data:image/png,a 1x, https://cdn.example.com/b.png 2x">`, "cdn.example.com", 1},
		{"poster", `<video poster="https://img.example.com/p.jpg"></video>`, "img.example.com", 1},
		{"form action", `<form action="https://evil.example/collect"></form>`, "evil.example", 1},
		{"formaction", `<button formaction="//evil.example/">x</button>`, "evil.example", 1},
		{"ping", `<a href="#x" ping="https://track.example/p">x</a>`, "track.example", 1},
		{"xlink:href", `<svg><image xlink:href="https://img.example.com/a.svg"/></svg>`, "img.example.com", 1},
		{"svg use", `<svg><use href="sprite.svg#i"/></svg>`, "sprite.svg#i", 1},
		{"link to outside", `<a href="https://example.com">site</a>`, "example.com", 1},
		{"data link", `<a href="data:text/html,hi">x</a>`, "data:", 1},
		{"stylesheet link", `<link rel="stylesheet" href="https://fonts.googleapis.com/css">`, `<link rel="stylesheet">`, 1},
		{"preconnect", `<link rel="preconnect" href="https://fonts.gstatic.com">`, "fonts.gstatic.com", 1},
		{"outside font", "<style>\n@font-face { font-family: x;\n src: url(https://fonts.example.com/x.woff2) }</style>", "url(fonts.example.com", 3},
		{"escaped url", `<style>.a{background:u\72l(//img.example.com/x.png)}</style>`, "url(img.example.com", 1},
		{"quoted url", `<div style="background: url( 'https://img.example.com/x.png' )">`, "url(img.example.com", 1},
		{"image-set string", `<style>.a{background-image:image-set("https://img.example.com/x.png" 1x)}</style>`, "url(img.example.com", 1},
		{"css import", `<style>@import "x.css";</style>`, "@import", 1},
		{"relative css url", `<style>.a{background:url(bg.png)}</style>`, "url(bg.png", 1},
		{"svg presentation url", `<svg><rect fill="url(https://x.example/a.svg#g)"/></svg>`, "x.example", 1},
		{"iframe", "<main>\n<iframe srcdoc=\"<p>x\"></iframe></main>", "<iframe>", 2},
		{"frameset", `<frameset><frame></frameset>`, "<frameset>", 1},
		{"object", `<object data="data:text/html,x"></object>`, "<object>", 1},
		{"embed", `<embed src="data:image/svg+xml,x">`, "<embed>", 1},
		{"portal", `<portal></portal>`, "<portal>", 1},
		{"declarative shadow root", "<div>\n<template shadowrootmode=\"closed\"><p>x</p></template></div>", "<template shadowrootmode>", 2},
		{"base", `<base href="/">`, "<base>", 1},
		{"xml:base", `<svg xml:base="https://x.example/"></svg>`, "xml:base", 1},
		{"meta refresh", `<meta http-equiv="refresh" content="5">`, `<meta http-equiv="refresh">`, 1},
		{"meta set-cookie", `<meta http-equiv="Set-Cookie" content="a=b">`, `<meta http-equiv="Set-Cookie">`, 1},
		{"importmap", `<script type="importmap">{}</script>`, `<script type="importmap">`, 1},
		{"speculation rules", `<script type="speculationrules">{}</script>`, `<script type="speculationrules">`, 1},
		{"svg animates a link", `<svg><a><set attributeName="href" to="https://x.example"/></a></svg>`, `<set attributeName="href">`, 1},
		{"new WebSocket", "<script>\nconst s = 1;\nconst ws = new WebSocket('wss://x.example');\n</script>", "new WebSocket", 3},
		{"escaped identifier", `<script>new \u0057ebSocket("x")</script>`, "new WebSocket", 1},
		{"name in a string", `<script>const W = window["WebSocket"];</script>`, `"WebSocket"`, 1},
		{"escaped name in a string", `<script>const W = window["\x57ebSocket"];</script>`, `"WebSocket"`, 1},
		{"webrtc", `<script>const pc = new RTCPeerConnection({iceServers: []})</script>`, "new RTCPeerConnection", 1},
		{"webkit webrtc", `<script>new webkitRTCPeerConnection()</script>`, "new webkitRTCPeerConnection", 1},
		{"webtransport", `<script>new WebTransport(u)</script>`, "new WebTransport", 1},
		{"eventsource", `<script>new EventSource("/x")</script>`, "new EventSource", 1},
		{"sendBeacon", `<script>navigator.sendBeacon("/x", d)</script>`, "sendBeacon", 1},
		{"worker", `<script>new Worker(u)</script>`, "new Worker", 1},
		{"shared worker", `<script>new SharedWorker(u)</script>`, "new SharedWorker", 1},
		{"service worker", `<script>navigator.serviceWorker.register("sw.js")</script>`, "serviceWorker", 1},
		{"importScripts", `<script>importScripts("x.js")</script>`, "importScripts", 1},
		{"paint worklet", `<script>CSS.paintWorklet.addModule(u)</script>`, "paintWorklet", 1},
		{"window.open", `<script>window.open("#")</script>`, "window.open", 1},
		{"dynamic import", `<script>import("https://cdn.example.com/m.js")</script>`, "import(cdn.example.com)", 1},
		{"static import", `<script type="module">import x from "https://esm.example.com/x";</script>`, "from esm.example.com", 1},
		{"bare import", `<script type="module">import "./x.js";</script>`, `import "./x.js"`, 1},
		{"export from", `<script type="module">export * from "./x.js";</script>`, `from "./x.js"`, 1},
		{"fetch to outside", `<script>fetch("https://api.example.com/x")</script>`, "api.example.com", 1},
		{"url in a template", "<script>img.src = `https://img.example.com/${n}.png`</script>", "img.example.com", 1},
		{"url after text in a string", `<script>el.innerHTML = '<img src="https://img.example.com/x.png">'</script>`, "img.example.com", 1},
		{"iframe in markup", `<script>document.body.insertAdjacentHTML("beforeend", "<iframe src=x>")</script>`, "<iframe>", 1},
		{"createElement iframe", `<script>document.createElement("IFRAME")</script>`, `createElement("IFRAME")`, 1},
		{"event handler", `<body onload="new WebSocket('x')">`, "new WebSocket", 1},
		{"javascript: link", `<a href="javascript:new%20EventSource('x')">x</a>`, "new EventSource", 1},
		{"classic html comment hides nothing", "<script>\nx = 1 <!-- y\nnew WebSocket(u)</script>", "new WebSocket", 3},
		{"regex after if", "<script>\nif (a) /`/.test(b); new WebSocket(u); c = `x`</script>", "new WebSocket", 2},
		{"unreadable script", "<script>\nconst a = 'open\n</script>", "an unreadable script", 2},
		{"data block url", `<script type="text/x-template"><img src="https://img.example.com/x.png"></script>`, "img.example.com", 1},
		{"attribute text", `<div title="see https://example.com">x</div>`, "example.com", 1},
		{"bad namespace", `<svg xmlns="https://evil.example/ns"></svg>`, "evil.example", 1},
		{"other scheme", `<a href="intent://x#Intent;end">x</a>`, "intent:", 1},
		{"script in svg", `<svg><script>new WebSocket(u)</script></svg>`, "new WebSocket", 1},
		{"style breaking out of svg", `<svg><style><img src="https://img.example.com/x"></style></svg>`, "img.example.com", 1},
		{"expression", `<div style="width: expression(alert(1))">`, "expression(", 1},
	} {
		ps := Problems([]byte(c.src))
		var found []string
		ok := false
		for _, p := range ps {
			found = append(found, p.String())
			if p.Found == c.found && p.Line == c.line && p.Why != "" && p.Where != "" {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: want `%s` on line %d, got %q", c.name, c.found, c.line, found)
		}
	}
}

func TestWholePage(t *testing.T) {
	big := append([]byte("<p>"), make([]byte, MaxSize)...)
	for name, c := range map[string]struct {
		src   []byte
		found string
	}{
		"too big":  {big, "513 KB"},
		"not utf8": {[]byte("<p>\n\xff</p>"), "bytes that are not UTF-8"},
		"empty":    {[]byte(" \n "), "nothing"},
	} {
		ps := Problems(c.src)
		if len(ps) != 1 || ps[0].Found != c.found {
			t.Errorf("%s: %v", name, ps)
		}
	}
	if ps := Problems([]byte("<p>\n\xff</p>")); ps[0].Line != 2 {
		t.Errorf("invalid UTF-8 on line %d, want 2", ps[0].Line)
	}
}

func TestCheckSentence(t *testing.T) {
	src := "<script src=\"https://cdn.example.com/x.js\"></script>\n<iframe></iframe>"
	err := Check([]byte(src))
	if !errs.Is(err, errs.Invalid) {
		t.Fatalf("Check = %v, want an Invalid error", err)
	}
	want := "line 1: `cdn.example.com` in <script src>: " + whyScriptSrc + "; line 2: `<iframe>` in the page: " + whyFrame + "."
	if err.Error() != want {
		t.Errorf("sentence\n got %s\nwant %s", err, want)
	}
	var many strings.Builder
	for i := 0; i < 40; i++ {
		many.WriteString("<iframe></iframe>\n")
	}
	ps := Problems([]byte(many.String()))
	if len(ps) != MaxProblems || ps[MaxProblems-1].Found != "21 more" {
		t.Errorf("40 iframes: %d problems, last %v", len(ps), ps[len(ps)-1])
	}
	if s := Sentence(ps); !strings.HasSuffix(s, "; and 15 more.") {
		t.Errorf("sentence ends %q", s[len(s)-40:])
	}
}
