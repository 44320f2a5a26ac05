package look

import (
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/css"
)

// A value rule returns "" when the value (whitespace dropped, commas kept) is allowed, else the part it
// refuses.
type valueRule func(v []css.Node) string

// Properties is the allow-list of docs/PAGES.md (Looks): colours, fonts, text size, spacing, corners,
// borders and small shadows. Each property has the rule its value must meet.
var Properties = map[string]valueRule{
	"color": colour, "background-color": colour, "outline-color": colour, "accent-color": colour,
	"caret-color": colour, "text-decoration-color": colour, "column-rule-color": colour, "fill": colour,
	"stroke": colour, "text-emphasis-color": colour, "border-top-color": colour, "border-right-color": colour,
	"border-bottom-color": colour, "border-left-color": colour,
	"border-color":     upTo(4, colourNode),
	"scrollbar-color":  scrollbarColour,
	"background":       background,
	"background-image": background,

	"font-family": fontFamily, "font-size": fontSize, "font-weight": fontWeight, "font-style": fontStyle,
	"font-variant": anyKeywords, "font-variant-caps": anyKeywords, "font-variant-numeric": anyKeywords,
	"font-variant-ligatures": anyKeywords, "font-kerning": keywords("auto", "normal", "none"),
	"font-stretch": fontStretch, "line-height": lineHeight,
	"letter-spacing": spacingBetween, "word-spacing": spacingBetween,
	"text-transform":            keywords("none", "capitalize", "uppercase", "lowercase", "full-width"),
	"text-align":                keywords("left", "right", "center", "justify", "start", "end"),
	"text-decoration-line":      keywordsUpTo(3, "none", "underline", "overline", "line-through"),
	"text-decoration-style":     keywords(textDecorationStyles...),
	"text-decoration-thickness": thinLength,
	"text-underline-offset":     underlineOffset,
	"text-decoration":           textDecoration,
	"list-style-type":           anyKeywords,
	"color-scheme":              keywordsUpTo(3, "normal", "light", "dark", "only"),

	"margin": upTo(4, margin), "margin-top": single(margin), "margin-right": single(margin), "margin-bottom": single(margin),
	"margin-left": single(margin), "margin-block": upTo(2, margin), "margin-inline": upTo(2, margin),
	"margin-block-start": single(margin), "margin-block-end": single(margin), "margin-inline-start": single(margin), "margin-inline-end": single(margin),
	"padding": upTo(4, space), "padding-top": single(space), "padding-right": single(space), "padding-bottom": single(space),
	"padding-left": single(space), "padding-block": upTo(2, space), "padding-inline": upTo(2, space),
	"padding-block-start": single(space), "padding-block-end": single(space), "padding-inline-start": single(space), "padding-inline-end": single(space),
	"gap": upTo(2, space), "row-gap": single(space), "column-gap": single(space),

	"border-radius": borderRadius, "border-top-left-radius": upTo(2, corner), "border-top-right-radius": upTo(2, corner),
	"border-bottom-left-radius": upTo(2, corner), "border-bottom-right-radius": upTo(2, corner),

	"border": border, "border-top": border, "border-right": border, "border-bottom": border, "border-left": border,
	"border-width": upTo(4, borderWidth), "border-top-width": single(borderWidth), "border-right-width": single(borderWidth),
	"border-bottom-width": single(borderWidth), "border-left-width": single(borderWidth),
	"border-style": upTo(4, borderStyleNode), "border-top-style": single(borderStyleNode), "border-right-style": single(borderStyleNode),
	"border-bottom-style": single(borderStyleNode), "border-left-style": single(borderStyleNode),

	"box-shadow": shadows(true), "text-shadow": shadows(false),
}

// Variables are the web UI's custom properties a look may set, with the rule of what each holds.
var Variables = map[string]valueRule{
	"--bg": colour, "--surface": colour, "--ink": colour, "--muted": colour, "--line": colour, "--accent": colour,
	"--accent-ink": colour, "--accent-soft": colour, "--warn": colour, "--warn-soft": colour, "--danger": colour,
	"--focus": colour, "--radius": corner1, "--shadow": shadows(true),
}

// wideKeywords mean the same for every property and add nothing.
var wideKeywords = set("inherit", "initial", "unset", "revert", "revert-layer")

// declaration checks one declaration and reports whether its value is allowed (a wide keyword counts
// as not set).
func (c *checker) declaration(d css.Declaration) bool {
	name := strings.ToLower(d.Name)
	if d.Important {
		c.add(Problem{Line: d.Line, Found: "!important", Why: whyImportant})
	}
	rule, ok := Properties[name]
	why := whyProperty
	if strings.HasPrefix(d.Name, "--") {
		rule, ok = Variables[d.Name]
		why = whyVariable
	}
	if !ok {
		c.add(Problem{Line: d.Line, Found: d.Name + ":", Why: why})
		return false
	}
	if bad, line := plain(d.Value); bad != "" {
		c.add(Problem{Line: line, Found: bad, Why: whyFunction})
		return false
	}
	v := words(d.Value)
	if len(v) == 1 && v[0].Type == css.Ident && wideKeywords[strings.ToLower(v[0].Value)] {
		return false
	}
	if bad := rule(v); bad != "" || len(v) == 0 {
		c.add(Problem{Line: d.Line, Found: fmt.Sprintf("%s: %s", d.Name, orWhole(bad, v)), Why: whyValue})
		return false
	}
	return true
}

func orWhole(bad string, v []css.Node) string {
	if bad != "" {
		return bad
	}
	return showWords(v)
}

// showWords renders a value's words with a space between them.
func showWords(v []css.Node) string {
	var b strings.Builder
	for i, n := range v {
		if i > 0 && n.Type != css.Comma {
			b.WriteByte(' ')
		}
		b.WriteString(show([]css.Node{n}))
	}
	return b.String()
}

// colourFunctions and gradients are the only functions a look's values may hold.
var colourFunctions = set("rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color", "color-mix", "light-dark")
var gradients = set("linear-gradient", "radial-gradient", "conic-gradient", "repeating-linear-gradient",
	"repeating-radial-gradient", "repeating-conic-gradient")

// plain finds what no value may hold: a url, a bad string, a function other than colours and gradients,
// a block. It returns what it found and its line.
func plain(v []css.Node) (string, int) {
	bad, line := "", 0
	css.Walk(v, func(n css.Node) bool {
		if bad != "" {
			return false
		}
		switch {
		case n.Type == css.URL || n.Type == css.BadURL:
			bad, line = "url(", n.Line
		case n.Type == css.BadString:
			bad, line = "an unclosed string", n.Line
		case n.Type == css.Function && !colourFunctions[strings.ToLower(n.Value)] && !gradients[strings.ToLower(n.Value)]:
			bad, line = n.Value+"(", n.Line
		case n.Unclosed:
			bad, line = n.String(), n.Line
		case n.Block:
			bad, line = show([]css.Node{n}), n.Line
		}
		return true
	})
	return bad, line
}

// words drops whitespace.
func words(v []css.Node) []css.Node {
	var out []css.Node
	for _, n := range v {
		if n.Type != css.Whitespace {
			out = append(out, n)
		}
	}
	return out
}

// A node rule judges one word of a value.
type nodeRule func(n css.Node) bool

func single(f nodeRule) valueRule {
	return func(v []css.Node) string {
		if len(v) != 1 || !f(v[0]) {
			return showWords(v)
		}
		return ""
	}
}

func upTo(k int, f nodeRule) valueRule {
	return func(v []css.Node) string {
		if len(v) == 0 || len(v) > k {
			return showWords(v)
		}
		for _, n := range v {
			if !f(n) {
				return showWords([]css.Node{n})
			}
		}
		return ""
	}
}

func keywordNode(words ...string) nodeRule {
	s := set(words...)
	return func(n css.Node) bool { return n.Type == css.Ident && s[strings.ToLower(n.Value)] }
}

func keywords(words ...string) valueRule { return single(keywordNode(words...)) }

func keywordsUpTo(k int, words ...string) valueRule { return upTo(k, keywordNode(words...)) }

// anyKeywords: plain identifiers only (font-variant, list-style-type).
var anyKeywords = upTo(4, func(n css.Node) bool { return n.Type == css.Ident })

var namedColours = set("aliceblue", "antiquewhite", "aqua", "aquamarine", "azure", "beige", "bisque", "black",
	"blanchedalmond", "blue", "blueviolet", "brown", "burlywood", "cadetblue", "chartreuse", "chocolate", "coral",
	"cornflowerblue", "cornsilk", "crimson", "cyan", "darkblue", "darkcyan", "darkgoldenrod", "darkgray", "darkgreen",
	"darkgrey", "darkkhaki", "darkmagenta", "darkolivegreen", "darkorange", "darkorchid", "darkred", "darksalmon",
	"darkseagreen", "darkslateblue", "darkslategray", "darkslategrey", "darkturquoise", "darkviolet", "deeppink",
	"deepskyblue", "dimgray", "dimgrey", "dodgerblue", "firebrick", "floralwhite", "forestgreen", "fuchsia",
	"gainsboro", "ghostwhite", "gold", "goldenrod", "gray", "green", "greenyellow", "grey", "honeydew", "hotpink",
	"indianred", "indigo", "ivory", "khaki", "lavender", "lavenderblush", "lawngreen", "lemonchiffon", "lightblue",
	"lightcoral", "lightcyan", "lightgoldenrodyellow", "lightgray", "lightgreen", "lightgrey", "lightpink",
	"lightsalmon", "lightseagreen", "lightskyblue", "lightslategray", "lightslategrey", "lightsteelblue",
	"lightyellow", "lime", "limegreen", "linen", "magenta", "maroon", "mediumaquamarine", "mediumblue",
	"mediumorchid", "mediumpurple", "mediumseagreen", "mediumslateblue", "mediumspringgreen", "mediumturquoise",
	"mediumvioletred", "midnightblue", "mintcream", "mistyrose", "moccasin", "navajowhite", "navy", "oldlace",
	"olive", "olivedrab", "orange", "orangered", "orchid", "palegoldenrod", "palegreen", "paleturquoise",
	"palevioletred", "papayawhip", "peachpuff", "peru", "pink", "plum", "powderblue", "purple", "rebeccapurple",
	"red", "rosybrown", "royalblue", "saddlebrown", "salmon", "sandybrown", "seagreen", "seashell", "sienna",
	"silver", "skyblue", "slateblue", "slategray", "slategrey", "snow", "springgreen", "steelblue", "tan", "teal",
	"thistle", "tomato", "turquoise", "violet", "wheat", "white", "whitesmoke", "yellow", "yellowgreen",
	"transparent", "currentcolor", "canvas", "canvastext", "linktext", "visitedtext", "activetext", "buttonface",
	"buttontext", "buttonborder", "field", "fieldtext", "highlight", "highlighttext", "selecteditem",
	"selecteditemtext", "mark", "marktext", "graytext", "accentcolor", "accentcolortext")

// colourNode: a hex colour, a named colour, or a colour function of numbers, keywords and colours.
func colourNode(n css.Node) bool {
	switch n.Type {
	case css.Hash:
		return hexColour(n.Value)
	case css.Ident:
		return namedColours[strings.ToLower(n.Value)]
	case css.Function:
		return colourFunctions[strings.ToLower(n.Value)] && functionArgs(n.Children)
	}
	return false
}

var colour = single(colourNode)

func hexColour(s string) bool {
	if l := len(s); l != 3 && l != 4 && l != 6 && l != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// functionArgs: the inside of a colour function or gradient: numbers, keywords, colours, commas, "/".
func functionArgs(ns []css.Node) bool {
	for _, a := range ns {
		switch {
		case a.Type == css.Whitespace, a.Type == css.Comma, a.Type == css.Number, a.Type == css.Percentage,
			a.Type == css.Dimension, a.Type == css.Ident:
		case a.Type == css.Delim && (a.Value == "/" || a.Value == "+" || a.Value == "-"):
		case a.Type == css.Hash && hexColour(a.Value):
		case a.Type == css.Function && colourFunctions[strings.ToLower(a.Value)]:
			if !functionArgs(a.Children) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func gradientNode(n css.Node) bool {
	return n.Type == css.Function && gradients[strings.ToLower(n.Value)] && functionArgs(n.Children)
}

// background: one colour, one gradient, or none.
var background = single(func(n css.Node) bool {
	return colourNode(n) || gradientNode(n) || (n.Type == css.Ident && strings.EqualFold(n.Value, "none"))
})

var scrollbarColour = func(v []css.Node) string {
	if len(v) == 1 && v[0].Type == css.Ident && strings.EqualFold(v[0].Value, "auto") {
		return ""
	}
	if len(v) != 2 {
		return showWords(v)
	}
	return upTo(2, colourNode)(v)
}

// length is a px, em or rem length (or 0) from lo to hi pixels; em and rem count as 16 px.
func length(lo, hi float64) nodeRule {
	return func(n css.Node) bool {
		px, ok := pixels(n)
		return ok && px >= lo && px <= hi
	}
}

func pixels(n css.Node) (float64, bool) {
	switch {
	case n.Type == css.Number && n.Num == 0:
		return 0, true
	case n.Type != css.Dimension:
		return 0, false
	}
	switch strings.ToLower(n.Unit) {
	case "px":
		return n.Num, true
	case "em", "rem":
		return n.Num * 16, true
	}
	return 0, false
}

// margin and space (padding, gap) are 0 to 64 px: no negative spacing pulls one thing over another.
var space = length(0, 64)

func margin(n css.Node) bool { return space(n) || keywordNode("auto")(n) }

// fontSize keeps text at 12px or more, and at most 48px: px from 12, pt from 9, em, rem and % never
// below the parent's or root's size (which is itself at least 12px), and the keywords from small up.
var fontSize = single(func(n css.Node) bool {
	switch n.Type {
	case css.Ident:
		return keywordNode("small", "medium", "large", "x-large", "xx-large", "xxx-large", "larger")(n)
	case css.Percentage:
		return n.Num >= 100 && n.Num <= 300
	case css.Dimension:
		switch strings.ToLower(n.Unit) {
		case "px":
			return n.Num >= 12 && n.Num <= 48
		case "pt":
			return n.Num >= 9 && n.Num <= 36
		case "em", "rem":
			return n.Num >= 1 && n.Num <= 3
		}
	}
	return false
})

var fontWeight = single(func(n css.Node) bool {
	return keywordNode("normal", "bold", "bolder", "lighter")(n) || (n.Type == css.Number && n.Num >= 1 && n.Num <= 1000)
})

var fontStyle = func(v []css.Node) string {
	if len(v) == 2 && keywordNode("oblique")(v[0]) && v[1].Type == css.Dimension && strings.EqualFold(v[1].Unit, "deg") && v[1].Num >= -90 && v[1].Num <= 90 {
		return ""
	}
	return keywords("normal", "italic", "oblique")(v)
}

var fontStretch = single(func(n css.Node) bool {
	return n.Type == css.Ident || (n.Type == css.Percentage && n.Num >= 50 && n.Num <= 200)
})

// fontFamily: up to 8 families, each a quoted name or words.
var fontFamily = func(v []css.Node) string {
	families, words := 0, 0
	for _, n := range v {
		switch {
		case n.Type == css.Comma:
			if words == 0 {
				return ","
			}
			words = 0
			continue
		case n.Type == css.String && words == 0 && len(n.Value) > 0 && len(n.Value) <= 64:
		case n.Type == css.Ident && len(n.Value) <= 64:
		default:
			return showWords([]css.Node{n})
		}
		if words == 0 {
			families++
		}
		words++
	}
	if families == 0 || families > 8 || words == 0 {
		return showWords(v)
	}
	return ""
}

var lineHeight = single(func(n css.Node) bool {
	switch n.Type {
	case css.Ident:
		return strings.EqualFold(n.Value, "normal")
	case css.Number:
		return n.Num >= 1 && n.Num <= 3
	case css.Percentage:
		return n.Num >= 100 && n.Num <= 300
	}
	return length(12, 96)(n)
})

var spacingBetween = single(func(n css.Node) bool { return keywordNode("normal")(n) || length(-1, 8)(n) })

var textDecorationStyles = []string{"solid", "double", "dotted", "dashed", "wavy"}

var thinLength = single(func(n css.Node) bool { return keywordNode("auto", "from-font")(n) || length(0, 4)(n) })

var underlineOffset = single(func(n css.Node) bool { return keywordNode("auto")(n) || length(0, 8)(n) })

var textDecoration = upTo(4, func(n css.Node) bool {
	return keywordNode(append([]string{"none", "underline", "overline", "line-through", "auto", "from-font"}, textDecorationStyles...)...)(n) ||
		colourNode(n) || length(0, 4)(n)
})

// corner is a radius: 0 to 48 px, or up to 50%.
func corner(n css.Node) bool {
	return length(0, 48)(n) || (n.Type == css.Percentage && n.Num >= 0 && n.Num <= 50)
}

var corner1 = single(corner)

// borderRadius: one to four corners, then optionally "/" and one to four more.
var borderRadius = func(v []css.Node) string {
	for i, n := range v {
		if n.Type == css.Delim && n.Value == "/" {
			if bad := upTo(4, corner)(v[:i]); bad != "" {
				return bad
			}
			return upTo(4, corner)(v[i+1:])
		}
	}
	return upTo(4, corner)(v)
}

func borderWidth(n css.Node) bool {
	return keywordNode("thin", "medium", "thick")(n) || length(0, 8)(n)
}

var borderStyleNode = keywordNode("none", "hidden", "solid", "dashed", "dotted", "double", "groove", "ridge", "inset", "outset")

// border: a width, a style and a colour, each at most once, in any order.
var border = func(v []css.Node) string {
	if len(v) == 0 || len(v) > 3 {
		return showWords(v)
	}
	var w, s, col bool
	for _, n := range v {
		switch {
		case !w && borderWidth(n):
			w = true
		case !s && borderStyleNode(n):
			s = true
		case !col && colourNode(n):
			col = true
		default:
			return showWords([]css.Node{n})
		}
	}
	return ""
}

// shadows: none, or up to three shadows of two to four small lengths (within 16 px each way; box
// shadows may be inset), with a colour.
func shadows(box bool) valueRule {
	return func(v []css.Node) string {
		if len(v) == 1 && keywordNode("none")(v[0]) {
			return ""
		}
		var one []css.Node
		count := 0
		check := func() string {
			count++
			lengths, inset, col := 0, false, false
			for _, n := range one {
				switch {
				case box && !inset && keywordNode("inset")(n):
					inset = true
				case lengths < 4 && length(-16, 16)(n) && !(lengths == 2 && mustPositive(n)) && (box || lengths < 3):
					lengths++
				case !col && colourNode(n):
					col = true
				default:
					return showWords([]css.Node{n})
				}
			}
			if lengths < 2 || count > 3 {
				return showWords(one)
			}
			return ""
		}
		for _, n := range v {
			if n.Type == css.Comma {
				if bad := check(); bad != "" {
					return bad
				}
				one = nil
				continue
			}
			one = append(one, n)
		}
		return check()
	}
}

// mustPositive: a blur radius is never negative.
func mustPositive(n css.Node) bool {
	px, _ := pixels(n)
	return px < 0
}
