package hooks

import (
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
)

// search is one text search an agent is about to run.
type search struct {
	pattern, within, glob string
	fold                  bool
}

// declKeywords open a declaration in Go, TypeScript/JavaScript, Python and their neighbours.
var declKeywords = map[string]bool{"func": true, "type": true, "class": true, "def": true, "interface": true,
	"struct": true, "enum": true, "fn": true, "function": true, "const": true, "var": true, "let": true, "trait": true}

// declModifiers may come before a declaration keyword.
var declModifiers = map[string]bool{"export": true, "default": true, "async": true, "pub": true, "public": true,
	"private": true, "static": true, "abstract": true, "declare": true}

var escapeRe = lazyregexp.New(`\\[A-Za-z]`)

// DeclName returns the name a search pattern looks for when the pattern is a declaration search
// ("func ParseHook", `type\s+Box\b`, "def search", "(class|interface) Foo", `func \(.*\) Open`), else "".
func DeclName(pattern string) string {
	p := escapeRe.ReplaceAllString(pattern, " ")
	words := identRe.FindAllString(p, -1)
	i := 0
	for i < len(words) && declModifiers[words[i]] {
		i++
	}
	if i >= len(words) || !declKeywords[words[i]] {
		return ""
	}
	if words[i] == "func" {
		// a Go method receiver sits between func and the name: take the name after its parenthesis
		rest := strings.TrimLeft(p[strings.Index(p, "func")+4:], " +*.?^\\")
		if strings.HasPrefix(rest, "(") {
			if j := strings.Index(rest, ")"); j >= 0 {
				if ws := identRe.FindAllString(rest[j+1:], -1); len(ws) > 0 {
					return ws[0]
				}
			}
			return ""
		}
	}
	for i < len(words) && (declKeywords[words[i]] || declModifiers[words[i]]) {
		i++
	}
	if i >= len(words) {
		return ""
	}
	return words[i]
}

// valueFlags are grep, rg, ag and git grep options that take the next word as their value.
var valueFlags = map[string]bool{"-e": true, "-f": true, "-m": true, "-A": true, "-B": true, "-C": true, "-g": true,
	"-t": true, "-T": true, "--glob": true, "--type": true, "--max-count": true, "--include": true, "--exclude": true}

// pagers may follow a search in a pipe without changing what it searches.
var pagers = map[string]bool{"head": true, "tail": true, "wc": true, "sort": true, "uniq": true, "less": true, "cat": true}

// parseShellSearch reads a simple grep, rg, ag, ack or git grep command (optionally piped into a pager).
// Compound commands, redirections and substitutions are not searches it can answer.
func parseShellSearch(cmd string) (search, bool) {
	if strings.ContainsAny(cmd, ";&><`\n") || strings.Contains(cmd, "$(") {
		return search{}, false
	}
	segs := strings.Split(cmd, "|")
	for _, seg := range segs[1:] {
		f := strings.Fields(seg)
		if len(f) == 0 || !pagers[f[0]] {
			return search{}, false
		}
	}
	args := shellWords(segs[0])
	if len(args) == 0 {
		return search{}, false
	}
	switch {
	case args[0] == "git" && len(args) > 1 && args[1] == "grep":
		args = args[2:]
	case args[0] == "grep" || args[0] == "egrep" || args[0] == "rg" || args[0] == "ag" || args[0] == "ack":
		args = args[1:]
	default:
		return search{}, false
	}
	var q search
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-i" || a == "--ignore-case":
			q.fold = true
		case a == "-e" && i+1 < len(args):
			q.pattern = args[i+1]
			i++
		case (a == "-g" || a == "--glob" || a == "--include") && i+1 < len(args):
			q.glob = args[i+1]
			i++
		case strings.HasPrefix(a, "--include="):
			q.glob = strings.TrimPrefix(a, "--include=")
		case valueFlags[a]:
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if !strings.HasPrefix(a, "--") && strings.Contains(a, "i") {
				q.fold = true
			}
		default:
			pos = append(pos, a)
		}
	}
	if q.pattern == "" && len(pos) > 0 {
		q.pattern, pos = pos[0], pos[1:]
	}
	if len(pos) == 1 {
		q.within = pos[0]
	}
	return q, q.pattern != ""
}

// shellWords splits a command line into words, honouring single and double quotes and backslashes.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, rune(0), false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
			in = true
		case r == '\\' && quote != '\'':
			esc = true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
