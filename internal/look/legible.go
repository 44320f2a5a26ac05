package look

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/css"
)

// Text stays readable (docs/PAGES.md, "Looks"): a look may recolour the UI, but the colours of its text
// and of the approve button must stay solid, and a block that sets a text colour and the ground it is
// read on must keep them apart.

// textColours colour what the owner reads: text (color, --ink, --muted), links and the primary button
// (--accent), and that button's label (--accent-ink).
var textColours = set("color", "--ink", "--muted", "--accent", "--accent-ink")

// readOn pairs a text colour with the ground it is read on, checked when one block sets both.
var readOn = [][2]string{{"--ink", "--surface"}, {"--ink", "--bg"}, {"--muted", "--surface"},
	{"--accent-ink", "--accent"}, {"color", "background-color"}, {"color", "background"}}

const (
	minAlpha    = 0.5 // less opaque, text is a ghost of itself
	minContrast = 3.0 // WCAG's floor for large text and controls: below it, text and ground blur
)

// surfaceColours are system colours of grounds: as text they vanish on the ground they name.
var surfaceColours = set("canvas", "buttonface", "field", "highlight", "selecteditem", "mark")

const (
	whyFaint    = "text must stay readable: its colour can't be transparent, currentcolor, a ground's system colour, color-mix() or less than half opaque"
	whyContrast = "text must stay readable: this colour is too close to the ground it is read on (contrast under 3:1)"
)

// faint returns the part of a text colour that makes it too faint to read, or "".
func faint(n css.Node) string {
	switch n.Type {
	case css.Ident:
		if name := strings.ToLower(n.Value); name == "transparent" || name == "currentcolor" || surfaceColours[name] {
			return n.Value
		}
	case css.Hash:
		if a, ok := hexAlpha(n.Value); ok && a < minAlpha {
			return "#" + n.Value
		}
	case css.Function:
		switch strings.ToLower(n.Value) {
		case "light-dark":
			for _, c := range words(n.Children) {
				if c.Type != css.Comma {
					if bad := faint(c); bad != "" {
						return bad
					}
				}
			}
			return ""
		case "color-mix":
			return show([]css.Node{n}) // the mix's alpha follows from its percentages: not worth reading
		}
		if a, ok := alpha(words(n.Children)); !ok || a < minAlpha {
			return show([]css.Node{n})
		}
	}
	return ""
}

// hexAlpha is the alpha of a 4- or 8-digit hex colour (1 for the others).
func hexAlpha(h string) (float64, bool) {
	switch len(h) {
	case 4:
		v, err := strconv.ParseUint(h[3:], 16, 8)
		return float64(v) / 15, err == nil
	case 8:
		v, err := strconv.ParseUint(h[6:], 16, 8)
		return float64(v) / 255, err == nil
	}
	return 1, true
}

// alpha reads a colour function's alpha: after "/" (rgb(0 0 0 / 50%)) or its fourth comma-separated
// argument (rgba(0, 0, 0, .5)); 1 when it has none. A relative colour (from …) takes its alpha from a
// colour the look does not show whole, so it is not read.
func alpha(args []css.Node) (float64, bool) {
	commas := 0
	for i, a := range args {
		switch {
		case a.Type == css.Ident && strings.EqualFold(a.Value, "from"):
			return 0, false
		case a.Type == css.Delim && a.Value == "/":
			return alphaValue(args[i+1:])
		case a.Type == css.Comma:
			if commas++; commas == 3 {
				return alphaValue(args[i+1:])
			}
		}
	}
	return 1, true
}

func alphaValue(rest []css.Node) (float64, bool) {
	if len(rest) != 1 {
		return 0, false
	}
	switch n := rest[0]; {
	case n.Type == css.Number:
		return n.Num, true
	case n.Type == css.Percentage:
		return n.Num / 100, true
	}
	return 0, false // none, a keyword: nothing to read as opaque
}

// legible checks one block's declarations (the last of each name): text colours solid, and each text
// colour apart from the ground the block sets beside it.
func (c *checker) legible(decls map[string]css.Declaration) {
	for _, name := range slices.Sorted(maps.Keys(decls)) {
		d := decls[name]
		v := words(d.Value)
		if !textColours[name] || len(v) != 1 {
			continue
		}
		if bad := faint(v[0]); bad != "" {
			c.add(Problem{Line: d.Line, Found: fmt.Sprintf("%s: %s", d.Name, bad), Why: whyFaint})
		}
	}
	for _, p := range readOn {
		fg, ok1 := decls[p[0]]
		bg, ok2 := decls[p[1]]
		if !ok1 || !ok2 {
			continue
		}
		a, ok1 := rgbOf(fg.Value)
		b, ok2 := rgbOf(bg.Value)
		if ok1 && ok2 && contrast(a, b) < minContrast {
			c.add(Problem{Line: fg.Line, Found: fmt.Sprintf("%s: %s on %s: %s", fg.Name, showWords(words(fg.Value)), bg.Name, showWords(words(bg.Value))), Why: whyContrast})
		}
	}
}

// rgbOf reads a value that is one colour the look states whole (hex, a named colour, rgb() or hsl() of
// numbers) into sRGB channels from 0 to 1; any other value is not compared.
func rgbOf(value []css.Node) ([3]float64, bool) {
	v := words(value)
	if len(v) != 1 {
		return [3]float64{}, false
	}
	n := v[0]
	switch n.Type {
	case css.Hash:
		return hexRGB(n.Value)
	case css.Ident:
		if x, ok := namedRGB[strings.ToLower(n.Value)]; ok {
			return [3]float64{float64(x>>16) / 255, float64(x>>8&0xff) / 255, float64(x&0xff) / 255}, true
		}
	case css.Function:
		var nums []css.Node
		for _, a := range words(n.Children) {
			if a.Type == css.Delim && a.Value == "/" {
				break
			}
			if a.Type != css.Comma {
				nums = append(nums, a)
			}
		}
		if len(nums) < 3 {
			return [3]float64{}, false
		}
		switch strings.ToLower(n.Value) {
		case "rgb", "rgba":
			var out [3]float64
			for i, a := range nums[:3] {
				switch a.Type {
				case css.Number:
					out[i] = a.Num / 255
				case css.Percentage:
					out[i] = a.Num / 100
				default:
					return out, false
				}
				out[i] = math.Min(1, math.Max(0, out[i]))
			}
			return out, true
		case "hsl", "hsla":
			h, s, l := nums[0], nums[1], nums[2]
			hue := h.Num
			if h.Type == css.Dimension && !strings.EqualFold(h.Unit, "deg") || h.Type != css.Number && h.Type != css.Dimension {
				return [3]float64{}, false
			}
			if s.Type != css.Percentage && s.Type != css.Number || l.Type != css.Percentage && l.Type != css.Number {
				return [3]float64{}, false
			}
			return hslRGB(hue, s.Num/100, l.Num/100), true
		}
	}
	return [3]float64{}, false
}

func hexRGB(h string) ([3]float64, bool) {
	if len(h) == 3 || len(h) == 4 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	if len(h) != 6 && len(h) != 8 {
		return [3]float64{}, false
	}
	var out [3]float64
	for i := range 3 {
		v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			return out, false
		}
		out[i] = float64(v) / 255
	}
	return out, true
}

// hslRGB converts hue (degrees), saturation and lightness (0–1) to sRGB (CSS Color 4, "HSL").
func hslRGB(hue, s, l float64) [3]float64 {
	s, l = math.Min(1, math.Max(0, s)), math.Min(1, math.Max(0, l))
	hue = math.Mod(math.Mod(hue, 360)+360, 360)
	f := func(n float64) float64 {
		k := math.Mod(n+hue/30, 12)
		a := s * math.Min(l, 1-l)
		return l - a*math.Max(-1, math.Min(k-3, math.Min(9-k, 1)))
	}
	return [3]float64{f(0), f(8), f(4)}
}

// contrast is the WCAG 2 contrast ratio of two sRGB colours, from 1 (the same) to 21.
func contrast(a, b [3]float64) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(c [3]float64) float64 {
	lin := func(v float64) float64 {
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c[0]) + 0.7152*lin(c[1]) + 0.0722*lin(c[2])
}

// namedRGB are the CSS named colours' sRGB values (CSS Color 4, "Named colors"): what a look's colours are
// compared by. transparent, currentcolor and the system colours have none that a look could know.
var namedRGB = map[string]uint32{
	"aliceblue": 0xf0f8ff, "antiquewhite": 0xfaebd7, "aqua": 0x00ffff, "aquamarine": 0x7fffd4,
	"azure": 0xf0ffff, "beige": 0xf5f5dc, "bisque": 0xffe4c4, "black": 0x000000, "blanchedalmond": 0xffebcd,
	"blue": 0x0000ff, "blueviolet": 0x8a2be2, "brown": 0xa52a2a, "burlywood": 0xdeb887, "cadetblue": 0x5f9ea0,
	"chartreuse": 0x7fff00, "chocolate": 0xd2691e, "coral": 0xff7f50, "cornflowerblue": 0x6495ed,
	"cornsilk": 0xfff8dc, "crimson": 0xdc143c, "cyan": 0x00ffff, "darkblue": 0x00008b, "darkcyan": 0x008b8b,
	"darkgoldenrod": 0xb8860b, "darkgray": 0xa9a9a9, "darkgreen": 0x006400, "darkgrey": 0xa9a9a9,
	"darkkhaki": 0xbdb76b, "darkmagenta": 0x8b008b, "darkolivegreen": 0x556b2f, "darkorange": 0xff8c00,
	"darkorchid": 0x9932cc, "darkred": 0x8b0000, "darksalmon": 0xe9967a, "darkseagreen": 0x8fbc8f,
	"darkslateblue": 0x483d8b, "darkslategray": 0x2f4f4f, "darkslategrey": 0x2f4f4f, "darkturquoise": 0x00ced1,
	"darkviolet": 0x9400d3, "deeppink": 0xff1493, "deepskyblue": 0x00bfff, "dimgray": 0x696969,
	"dimgrey": 0x696969, "dodgerblue": 0x1e90ff, "firebrick": 0xb22222, "floralwhite": 0xfffaf0,
	"forestgreen": 0x228b22, "fuchsia": 0xff00ff, "gainsboro": 0xdcdcdc, "ghostwhite": 0xf8f8ff,
	"gold": 0xffd700, "goldenrod": 0xdaa520, "gray": 0x808080, "green": 0x008000, "greenyellow": 0xadff2f,
	"grey": 0x808080, "honeydew": 0xf0fff0, "hotpink": 0xff69b4, "indianred": 0xcd5c5c, "indigo": 0x4b0082,
	"ivory": 0xfffff0, "khaki": 0xf0e68c, "lavender": 0xe6e6fa, "lavenderblush": 0xfff0f5,
	"lawngreen": 0x7cfc00, "lemonchiffon": 0xfffacd, "lightblue": 0xadd8e6, "lightcoral": 0xf08080,
	"lightcyan": 0xe0ffff, "lightgoldenrodyellow": 0xfafad2, "lightgray": 0xd3d3d3, "lightgreen": 0x90ee90,
	"lightgrey": 0xd3d3d3, "lightpink": 0xffb6c1, "lightsalmon": 0xffa07a, "lightseagreen": 0x20b2aa,
	"lightskyblue": 0x87cefa, "lightslategray": 0x778899, "lightslategrey": 0x778899,
	"lightsteelblue": 0xb0c4de, "lightyellow": 0xffffe0, "lime": 0x00ff00, "limegreen": 0x32cd32,
	"linen": 0xfaf0e6, "magenta": 0xff00ff, "maroon": 0x800000, "mediumaquamarine": 0x66cdaa,
	"mediumblue": 0x0000cd, "mediumorchid": 0xba55d3, "mediumpurple": 0x9370db, "mediumseagreen": 0x3cb371,
	"mediumslateblue": 0x7b68ee, "mediumspringgreen": 0x00fa9a, "mediumturquoise": 0x48d1cc,
	"mediumvioletred": 0xc71585, "midnightblue": 0x191970, "mintcream": 0xf5fffa, "mistyrose": 0xffe4e1,
	"moccasin": 0xffe4b5, "navajowhite": 0xffdead, "navy": 0x000080, "oldlace": 0xfdf5e6, "olive": 0x808000,
	"olivedrab": 0x6b8e23, "orange": 0xffa500, "orangered": 0xff4500, "orchid": 0xda70d6,
	"palegoldenrod": 0xeee8aa, "palegreen": 0x98fb98, "paleturquoise": 0xafeeee, "palevioletred": 0xdb7093,
	"papayawhip": 0xffefd5, "peachpuff": 0xffdab9, "peru": 0xcd853f, "pink": 0xffc0cb, "plum": 0xdda0dd,
	"powderblue": 0xb0e0e6, "purple": 0x800080, "rebeccapurple": 0x663399, "red": 0xff0000,
	"rosybrown": 0xbc8f8f, "royalblue": 0x4169e1, "saddlebrown": 0x8b4513, "salmon": 0xfa8072,
	"sandybrown": 0xf4a460, "seagreen": 0x2e8b57, "seashell": 0xfff5ee, "sienna": 0xa0522d, "silver": 0xc0c0c0,
	"skyblue": 0x87ceeb, "slateblue": 0x6a5acd, "slategray": 0x708090, "slategrey": 0x708090, "snow": 0xfffafa,
	"springgreen": 0x00ff7f, "steelblue": 0x4682b4, "tan": 0xd2b48c, "teal": 0x008080, "thistle": 0xd8bfd8,
	"tomato": 0xff6347, "turquoise": 0x40e0d0, "violet": 0xee82ee, "wheat": 0xf5deb3, "white": 0xffffff,
	"whitesmoke": 0xf5f5f5, "yellow": 0xffff00, "yellowgreen": 0x9acd32,
}
