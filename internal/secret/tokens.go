package secret

import "strings"

// tok is one word of normalised text as the phrase rules read it.
type tok struct {
	w     string // the word without surrounding quotes, brackets and trailing punctuation
	sep   bool   // a separator on its own: ":" "=" "-" "/" "|" "->"
	stop  bool   // a clause ends after it: . , ; ! ? or the end of the text
	comma bool   // the clause ended with a comma only
}

// tokenize cuts normalised text into words and separators. "password:hunter2" and "pwd=x" are cut at the
// separator when a word stands before it; a time (10:30) and a URL stay whole. A short aside in
// parentheses is left out: "password (Gmail): …" reads as "password: …".
func tokenize(n string) []tok {
	var out []tok
	fields := strings.Fields(strings.ReplaceAll(n, ";", "; "))
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.HasPrefix(f, "(") {
			if end := closing(fields, i); end >= 0 {
				if len(out) > 0 && strings.ContainsAny(fields[end], ".,;!?:") {
					out[len(out)-1].stop = out[len(out)-1].stop || strings.ContainsAny(fields[end], ".,;!?")
					if strings.HasSuffix(fields[end], ":") {
						out = append(out, tok{w: ":", sep: true})
					}
				}
				i = end
				continue
			}
		}
		f = strings.TrimLeft(f, "\"'“‘«([{<*_`")
		if f == "" {
			continue
		}
		if isSepWord(f) {
			out = append(out, tok{w: f, sep: true})
			continue
		}
		if k := strings.IndexAny(f, ":="); k > 0 && !strings.Contains(f, "://") && hasLetter(f[:k]) {
			out = append(out, tok{w: f[:k]}, tok{w: f[k : k+1], sep: true})
			if f = f[k+1:]; f == "" {
				continue
			}
		}
		core := strings.TrimRight(f, ".,;:!?)]}>\"'”’»*_`=")
		trail := f[len(core):]
		if core != "" {
			stop := strings.ContainsAny(trail, ".,;!?")
			out = append(out, tok{w: core, stop: stop, comma: stop && !strings.ContainsAny(trail, ".;!?")})
		}
		if strings.ContainsAny(trail, ":=") {
			out = append(out, tok{w: ":", sep: true})
		} else if core == "" && trail != "" && len(out) > 0 {
			out[len(out)-1].stop = out[len(out)-1].stop || strings.ContainsAny(trail, ".,;!?")
		}
	}
	if len(out) > 0 {
		out[len(out)-1].stop = true
		out[len(out)-1].comma = false
	}
	return out
}

// closing is the index of the field that closes the parenthesis opened at i, within six fields, or -1.
func closing(fields []string, i int) int {
	for j := i; j < len(fields) && j <= i+5; j++ {
		if strings.Contains(strings.TrimRight(fields[j], ".,;:!?"), ")") {
			return j
		}
	}
	return -1
}

func isSepWord(f string) bool {
	switch f {
	case ":", "=", "-", "--", "/", "|", "->", "=>", "→", "::":
		return true
	}
	return false
}

// word returns the i-th word, or "" past either end.
func word(ts []tok, i int) string {
	if i < 0 || i >= len(ts) {
		return ""
	}
	return ts[i].w
}
