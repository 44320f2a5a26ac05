package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/layout"
)

// The Bash guard (docs/HOOKS.md, "The Bash guard"): an agent's shell command that would decide for the owner
// (approve a card, unfreeze, set a switch, make or revoke a key, set the brain, add a backup, leave safe
// mode, turn a build back on, add or turn on a routine, whose prompt runs as the owner's words) or write into what only the box writes (.box/, the box's .git/, the switches, approval cards,
// nested reserved names) is denied. The command is read as a shell reads it: quotes removed, every
// command of a chain, pipe, group, subshell, substitution and `sh -c`/`eval` script, with environment
// assignments and wrappers (env, sudo, nohup, xargs, …) and any path to the binary. It is a guard rail for
// an agent being steered, not a wall: a command assembled at run time from pieces the hook cannot see
// (a variable holding "box", an encoded script) passes when nothing of it reads as one of these.

// word is one shell word after quote removal; dynamic marks one built from an expansion ($VAR,
// $(…), `…`) whose value the hook cannot know.
type word struct {
	text    string
	dynamic bool
	glob    bool // holds an unquoted *, ? or [: the shell may match it to a file name
}

// simpleCmd is one simple command: its words, the targets of the redirections that write, and the text
// it reads on stdin when the line gives it (a here-string, a here-document, an echo piped into it).
type simpleCmd struct {
	words  []word
	writes []word
	stdin  string
}

// maxShellDepth bounds the nesting of substitutions and scripts read (`sh -c "$(…)"` …).
const maxShellDepth = 8

// parseShell reads a command line into its simple commands, those of substitutions and of `sh -c` or
// `eval` scripts included, in the order they appear. It never fails: what it cannot read as a shell
// would is read as plain words.
func parseShell(src string) []simpleCmd {
	var out []simpleCmd
	parseInto(src, 0, &out)
	return out
}

// shellParser is the state of one level of reading.
type shellParser struct {
	src   []rune
	depth int
	out   *[]simpleCmd

	cmd     simpleCmd
	cur     strings.Builder
	inWord  bool
	dynamic bool
	glob    bool
	brace   bool // an unquoted { in the word: brace expansion may apply
	redir   int  // 0: a plain word is next; 1: a write's target; 2: a read's; 3: a here-string
	heredoc []string
	piped   bool      // the command being read gets the previous one's output
	prev    simpleCmd // the previous command, for what it pipes
	last    simpleCmd // the last command ended, for the here-documents it opened
}

func parseInto(src string, depth int, out *[]simpleCmd) {
	if depth > maxShellDepth {
		return
	}
	p := &shellParser{src: []rune(src), depth: depth, out: out}
	p.run()
	p.endCommand()
}

func (p *shellParser) endWord() {
	if !p.inWord {
		return
	}
	text := p.cur.String()
	texts := []string{text}
	if p.brace {
		texts = expandBraces(text, 64)
	}
	for _, t := range texts {
		w := word{text: t, dynamic: p.dynamic, glob: p.glob}
		switch p.redir {
		case 1:
			p.cmd.writes = append(p.cmd.writes, w)
		case 2:
			// a read, or a here-document's delimiter: nothing written
		case 3:
			p.cmd.stdin += t + "\n"
		default:
			p.cmd.words = append(p.cmd.words, w)
		}
	}
	p.redir = 0
	p.cur.Reset()
	p.inWord, p.dynamic, p.glob, p.brace = false, false, false, false
}

// endCommand ends the simple command being read; piped says whether the next one reads its output.
func (p *shellParser) endCommand(piped ...bool) {
	p.endWord()
	if len(p.cmd.words) > 0 || len(p.cmd.writes) > 0 {
		if p.piped && p.cmd.stdin == "" {
			if w := stripPrefix(p.prev.words); len(w) > 0 && (w[0].text == "echo" || w[0].text == "printf") {
				for _, x := range w[1:] {
					if !strings.HasPrefix(x.text, "-") {
						p.cmd.stdin += x.text + " "
					}
				}
			}
		}
		*p.out = append(*p.out, p.cmd)
		p.scripts(p.cmd)
		p.prev, p.last = p.cmd, p.cmd
	}
	p.piped = len(piped) > 0 && piped[0]
	p.cmd = simpleCmd{}
}

// shells are the programs that run a script given with -c or on stdin.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "busybox": true, "fish": true}

// scripts reads the scripts a command runs in a shell of its own: `bash -c SCRIPT`, `eval WORDS`, and a
// shell fed a script on stdin.
func (p *shellParser) scripts(c simpleCmd) {
	w := stripPrefix(c.words)
	if len(w) == 0 {
		return
	}
	switch name := filepath.Base(w[0].text); {
	case name == "eval":
		var parts []string
		for _, x := range w[1:] {
			parts = append(parts, x.text)
		}
		parseInto(strings.Join(parts, " "), p.depth+1, p.out)
	case shells[name]:
		for i := 1; i < len(w); i++ {
			a := w[i].text
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && i+1 < len(w) {
				parseInto(w[i+1].text, p.depth+1, p.out)
				return
			}
		}
		if c.stdin != "" {
			parseInto(c.stdin, p.depth+1, p.out)
		}
	}
}

// expandBraces expands a word's {a,b} lists as the shell does, at most limit words.
func expandBraces(t string, limit int) []string {
	open := strings.IndexByte(t, '{')
	if open < 0 {
		return []string{t}
	}
	depth, commas, end := 0, []int{}, -1
	for i := open; i < len(t) && end < 0; i++ {
		switch t[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if end < 0 || len(commas) == 0 {
		return []string{t}
	}
	var out []string
	start := open + 1
	for _, c := range append(commas, end) {
		for _, x := range expandBraces(t[:open]+t[start:c]+t[end+1:], limit-len(out)) {
			if len(out) >= limit {
				return out
			}
			out = append(out, x)
		}
		start = c + 1
	}
	return out
}

func (p *shellParser) add(r rune) {
	p.cur.WriteRune(r)
	p.inWord = true
}

func (p *shellParser) peek(i int) rune {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

func (p *shellParser) run() {
	for i := 0; i < len(p.src); i++ {
		r := p.src[i]
		switch {
		case r == '\\':
			if i+1 < len(p.src) {
				if p.src[i+1] != '\n' {
					p.add(p.src[i+1])
				}
				i++
			}
		case r == '\'':
			j := i + 1
			for j < len(p.src) && p.src[j] != '\'' {
				p.add(p.src[j])
				j++
			}
			p.inWord = true
			i = j
		case r == '"':
			i = p.doubleQuoted(i + 1)
		case r == '$':
			i = p.dollar(i, false)
		case r == '`':
			i = p.backtick(i + 1)
		case r == '#' && !p.inWord:
			for i < len(p.src) && p.src[i] != '\n' {
				i++
			}
			i--
		case r == ' ' || r == '\t' || r == '\r':
			p.endWord()
		case r == '\n':
			p.endCommand()
			i = p.skipHeredocs(i + 1)
		case r == '|':
			if p.peek(i+1) == '|' {
				p.endCommand()
				i++
				continue
			}
			if p.peek(i+1) == '&' {
				i++
			}
			p.endCommand(true)
		case r == ';' || r == '(' || r == ')':
			p.endCommand()
		case r == '&':
			if p.peek(i+1) == '>' { // &> and &>> write stdout and stderr
				p.endWord()
				i++
				if p.peek(i+1) == '>' {
					i++
				}
				p.redir = 1
				continue
			}
			p.endCommand()
		case r == '>' || r == '<':
			i = p.redirection(i)
		default:
			p.glob = p.glob || r == '*' || r == '?' || r == '['
			p.brace = p.brace || r == '{'
			p.add(r)
		}
	}
}

// redirection reads the operator at i (a digit word before it is its descriptor) and sets what the next
// word is; it returns the last index read.
func (p *shellParser) redirection(i int) int {
	if p.inWord && p.cur.Len() > 0 {
		if _, err := strconv.Atoi(p.cur.String()); err == nil && !p.dynamic {
			p.cur.Reset()
			p.inWord = false
		}
	}
	p.endWord()
	r := p.src[i]
	next := p.peek(i + 1)
	if next == '(' { // process substitution: <(…) >(…) are commands of their own
		p.endCommand()
		return i
	}
	if r == '<' {
		switch {
		case next == '<' && p.peek(i+2) == '<': // here-string: the command's stdin
			p.redir = 3
			return i + 2
		case next == '<': // here-document: remember the delimiter to skip its body
			j := i + 2
			if p.peek(j) == '-' {
				j++
			}
			for j < len(p.src) && (p.src[j] == ' ' || p.src[j] == '\t') {
				j++
			}
			k := j
			for k < len(p.src) && !strings.ContainsRune(" \t\n;&|<>()", p.src[k]) {
				k++
			}
			p.heredoc = append(p.heredoc, strings.Trim(string(p.src[j:k]), `'"\`))
			return k - 1
		case next == '>': // <> opens for reading and writing
			p.redir = 1
			return i + 1
		case next == '&':
			p.redir = 2
			return i + 1
		}
		p.redir = 2
		return i
	}
	switch {
	case next == '>' || next == '|':
		p.redir = 1
		return i + 1
	case next == '&':
		if d := p.peek(i + 2); d == '-' || d >= '0' && d <= '9' { // >&2: a duplication, no file
			j := i + 2
			for j+1 < len(p.src) && p.src[j+1] >= '0' && p.src[j+1] <= '9' {
				j++
			}
			return j
		}
		p.redir = 1
		return i + 1
	}
	p.redir = 1
	return i
}

// skipHeredocs skips the bodies of the here-documents begun on the line that just ended; it returns the
// index before the next line to read.
func (p *shellParser) skipHeredocs(i int) int {
	var body strings.Builder
	for _, delim := range p.heredoc {
		for i < len(p.src) {
			end := i
			for end < len(p.src) && p.src[end] != '\n' {
				end++
			}
			line := strings.TrimLeft(string(p.src[i:end]), "\t")
			i = end + 1
			if line == delim {
				break
			}
			body.WriteString(line + "\n")
		}
	}
	if len(p.heredoc) > 0 {
		c := p.last
		c.stdin, c.words = body.String(), stripPrefix(c.words)
		p.scripts(c) // a shell reading a here-document runs it
	}
	p.heredoc = nil
	return i - 1
}

// doubleQuoted reads a double-quoted string from i (after the quote); it returns the closing quote's index.
func (p *shellParser) doubleQuoted(i int) int {
	p.inWord = true
	for ; i < len(p.src); i++ {
		switch r := p.src[i]; {
		case r == '"':
			return i
		case r == '\\' && i+1 < len(p.src) && strings.ContainsRune("\"\\$`\n", p.src[i+1]):
			if p.src[i+1] != '\n' {
				p.add(p.src[i+1])
			}
			i++
		case r == '$':
			i = p.dollar(i, true)
		case r == '`':
			i = p.backtick(i + 1)
		default:
			p.add(r)
		}
	}
	return i
}

// dollar reads an expansion at i: $(…) and `…` are read as commands, $'…' is decoded, $NAME and ${…}
// are kept as written and mark the word dynamic. It returns the last index read.
func (p *shellParser) dollar(i int, quoted bool) int {
	next := p.peek(i + 1)
	switch {
	case next == '(' && p.peek(i+2) == '(': // arithmetic
		end := p.closing(i+1, '(', ')')
		p.add('0')
		p.dynamic = true
		return end
	case next == '(':
		end := p.closing(i+1, '(', ')')
		parseInto(string(p.src[min(i+2, end):end]), p.depth+1, p.out)
		p.inWord, p.dynamic = true, true
		return end
	case next == '{':
		end := p.closing(i+1, '{', '}')
		p.cur.WriteString(string(p.src[i:min(end+1, len(p.src))]))
		p.inWord, p.dynamic = true, true
		return end
	case next == '\'' && !quoted:
		return p.ansiC(i + 2)
	case next == '_' || next >= 'a' && next <= 'z' || next >= 'A' && next <= 'Z' || next >= '0' && next <= '9' || strings.ContainsRune("@*#?$!-", next):
		j := i + 1
		if next >= '0' && next <= '9' || strings.ContainsRune("@*#?$!-", next) {
			j = i + 2
		} else {
			for j < len(p.src) && (p.src[j] == '_' || p.src[j] >= 'a' && p.src[j] <= 'z' || p.src[j] >= 'A' && p.src[j] <= 'Z' || p.src[j] >= '0' && p.src[j] <= '9') {
				j++
			}
		}
		p.cur.WriteString(string(p.src[i:j]))
		p.inWord, p.dynamic = true, true
		return j - 1
	}
	p.add('$')
	return i
}

// backtick reads a `…` substitution from i (after the backquote) as commands; it returns the closing
// backquote's index.
func (p *shellParser) backtick(i int) int {
	var inner strings.Builder
	j := i
	for ; j < len(p.src) && p.src[j] != '`'; j++ {
		if p.src[j] == '\\' && j+1 < len(p.src) {
			j++
		}
		inner.WriteRune(p.src[j])
	}
	parseInto(inner.String(), p.depth+1, p.out)
	p.inWord, p.dynamic = true, true
	return j
}

// ansiC decodes a $'…' string from i (after the quote): \n, \t, \\, \', \", \xHH, \NNN; it returns the
// closing quote's index.
func (p *shellParser) ansiC(i int) int {
	p.inWord = true
	for ; i < len(p.src); i++ {
		r := p.src[i]
		if r == '\'' {
			return i
		}
		if r != '\\' || i+1 >= len(p.src) {
			p.add(r)
			continue
		}
		i++
		switch e := p.src[i]; {
		case e == 'n':
			p.add('\n')
		case e == 't':
			p.add('\t')
		case e == 'x':
			j := i + 1
			for j < len(p.src) && j < i+3 && strings.ContainsRune("0123456789abcdefABCDEF", p.src[j]) {
				j++
			}
			if v, err := strconv.ParseUint(string(p.src[i+1:j]), 16, 8); err == nil {
				p.add(rune(v))
			}
			i = j - 1
		case e >= '0' && e <= '7':
			j := i
			for j < len(p.src) && j < i+3 && p.src[j] >= '0' && p.src[j] <= '7' {
				j++
			}
			if v, err := strconv.ParseUint(string(p.src[i:j]), 8, 8); err == nil {
				p.add(rune(v))
			}
			i = j - 1
		default:
			p.add(e)
		}
	}
	return i
}

// closing finds the bracket that closes the one at i, skipping quoted text; len(src) when there is none.
func (p *shellParser) closing(i int, open, close rune) int {
	depth := 0
	for j := i; j < len(p.src); j++ {
		switch r := p.src[j]; r {
		case '\\':
			j++
		case '\'':
			for j++; j < len(p.src) && p.src[j] != '\''; j++ {
			}
		case '"':
			for j++; j < len(p.src) && p.src[j] != '"'; j++ {
				if p.src[j] == '\\' {
					j++
				}
			}
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(p.src)
}

// wrappers run the command that follows them (after their own options).
var wrappers = map[string]bool{"env": true, "sudo": true, "doas": true, "nohup": true, "time": true, "command": true, "builtin": true,
	"exec": true, "nice": true, "ionice": true, "timeout": true, "stdbuf": true, "chrt": true, "taskset": true, "setsid": true,
	"unbuffer": true, "caffeinate": true, "xargs": true, "watch": true, "strace": true, "flock": true, "!": true, "{": true, "}": true,
	"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true, "until": true, "fi": true, "done": true}

// stripPrefix drops what comes before the command a simple command runs: assignments (NAME=value),
// wrappers and their options (a number after timeout, nice -n, flock's file).
func stripPrefix(w []word) []word {
	for len(w) > 0 {
		t := w[0].text
		switch {
		case isAssignment(t):
			w = w[1:]
		case wrappers[filepath.Base(t)] && len(w) > 1:
			w = w[1:]
			for len(w) > 1 && (strings.HasPrefix(w[0].text, "-") || isAssignment(w[0].text) || isDuration(w[0].text)) {
				w = w[1:]
			}
		default:
			return w
		}
	}
	return w
}

func isAssignment(t string) bool {
	name, _, ok := strings.Cut(t, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isDuration(t string) bool {
	t = strings.TrimRight(t, "smhd")
	_, err := strconv.ParseFloat(t, 64)
	return err == nil && t != ""
}

// ownerVerbs are the box verbs that decide for the owner: the first word, and the second ("" for any,
// "*" for any but none and list).
var ownerVerbs = [][2]string{{"cards", "approve"}, {"brain", "set"}, {"backup", "add"}, {"safe-mode", "off"}, {"unfreeze", ""},
	{"switches", "*"}, {"keys", "*"}, {"builds", "on"}, {"routines", "add"}, {"routines", "on"},
	{"connectors", "call"}, {"connectors", "key"}} // a call runs as the owner; a key is the owner's account

// ownerVerb returns the owner's decision a box command line makes ("box cards approve"), or "" when the
// words after the binary decide nothing for the owner. Global flags may sit anywhere (--box DIR, --json).
func ownerVerb(args []word) string {
	var pos []word
	for i := 0; i < len(args) && len(pos) < 2; i++ {
		t := args[i].text
		switch {
		case t == "--box":
			i++
		case strings.HasPrefix(t, "-") && t != "-":
		default:
			pos = append(pos, args[i])
		}
	}
	if len(pos) == 0 {
		return ""
	}
	for _, v := range ownerVerbs {
		if !spells(pos[0], v[0]) {
			continue
		}
		switch {
		case v[1] == "":
			return "box " + v[0]
		case len(pos) < 2:
		case v[1] == "*" && !spells(pos[1], "list"):
			return "box " + v[0] + " " + pos[1].text
		case spells(pos[1], v[1]):
			return "box " + v[0] + " " + v[1]
		}
	}
	return ""
}

// spells reports whether a word may stand for lit: it is lit, or a pattern the shell could match to it.
func spells(w word, lit string) bool {
	if w.text == lit {
		return true
	}
	ok, _ := filepath.Match(w.text, lit)
	return w.glob && ok
}

// isBoxBinary reports whether a command word runs the box binary: box by any path, or this binary's own
// name (the hooks run as it).
func isBoxBinary(w word) bool {
	base := filepath.Base(strings.TrimSuffix(w.text, ".exe"))
	if spells(word{text: base, glob: w.glob}, "box") {
		return true
	}
	if exe, err := os.Executable(); err == nil {
		self := filepath.Base(exe)
		return self != "" && !strings.HasSuffix(self, ".test") && base == self
	}
	return false
}

// decidesForOwner returns the box verb a simple command runs that only the owner may run, or "". Every
// word is looked at as the binary (so env, sudo, xargs, find -exec, timeout … are seen through); a word
// built at run time ($B, "$(which box)") counts when what follows reads as such a verb.
func decidesForOwner(c simpleCmd) string {
	for i, w := range c.words {
		if isBoxBinary(w) || (w.dynamic && strings.HasPrefix(strings.TrimSpace(w.text), "$")) || (w.dynamic && w.text == "") {
			if v := ownerVerb(c.words[i+1:]); v != "" {
				return v
			}
		}
	}
	return ""
}

// writeTargets are the paths a simple command writes, moves or removes: its redirections, and the
// operands of tee, cp, mv, install, ln, rm, rmdir, unlink, truncate, shred, touch, mkdir, sed -i and
// dd of=. A cd changes the folder later commands of the line are read against (returned as cd).
func writeTargets(c simpleCmd) (targets []word, cd *word) {
	targets = append(targets, c.writes...)
	w := stripPrefix(c.words)
	if len(w) == 0 {
		return targets, nil
	}
	name := filepath.Base(w[0].text)
	if name == "busybox" && len(w) > 1 { // busybox sed …: the applet is the command
		w = w[1:]
		name = filepath.Base(w[0].text)
	}
	switch name {
	case "sed", "gsed", "perl":
		return append(targets, inPlaceFiles(strings.TrimPrefix(name, "g"), w[1:])...), nil
	case "awk", "gawk":
		return append(targets, awkInPlace(w[1:])...), nil
	case "sort":
		return append(targets, sortOutput(w[1:])...), nil
	}
	var ops []word
	var target *word
	linking, symbolic := name == "ln" || name == "link", false // what a link leads to is written next
	for i := 1; i < len(w); i++ {
		t := w[i].text
		if name == "ln" || name == "cp" {
			l, s := linkFlags(name, t)
			linking, symbolic = linking || l, symbolic || s
		}
		switch {
		case t == "-t" && i+1 < len(w) || t == "--target-directory" && i+1 < len(w):
			target = &w[i+1]
			i++
		case strings.HasPrefix(t, "--target-directory="):
			target = &word{text: strings.TrimPrefix(t, "--target-directory="), dynamic: w[i].dynamic}
		case movesInto[name] && groupTarget(t) != nil:
			if dir := *groupTarget(t); dir != "" {
				target = &word{text: dir, dynamic: w[i].dynamic}
			} else if i+1 < len(w) {
				target = &w[i+1]
				i++
			}
		case name == "truncate" && (t == "-s" || t == "-r") && i+1 < len(w):
			i++
		case name == "dd" && strings.HasPrefix(t, "of="):
			targets = append(targets, word{text: strings.TrimPrefix(t, "of="), dynamic: w[i].dynamic})
		case strings.HasPrefix(t, "-") && t != "-":
		default:
			ops = append(ops, w[i])
		}
	}
	switch name {
	case "cd", "pushd":
		switch {
		case len(ops) > 0:
			return targets, &ops[0]
		case name == "cd":
			return targets, &word{text: "~"} // the home folder
		default:
			return targets, &word{text: "-"} // pushd alone swaps to a folder the hook does not know
		}
	case "tee", "rm", "rmdir", "unlink", "truncate", "shred", "touch", "mkdir", "mv":
		targets = append(targets, ops...)
	case "cp", "install", "ln", "link", "rsync":
		if target == nil && len(ops) > 1 {
			target = &ops[len(ops)-1]
			ops = ops[:len(ops)-1]
		}
		if linking { // a link made to a file only the box writes is a way to write it next
			targets = append(targets, linkSources(ops, target, symbolic)...)
		}
	}
	if target != nil {
		targets = append(targets, *target)
	}
	return targets, nil
}

// movesInto are the commands whose -t names the folder their operands go into.
var movesInto = map[string]bool{"cp": true, "mv": true, "ln": true, "install": true}

// groupTarget reads a flag group of cp, mv, ln or install (-st DIR, -vtDIR) for -t: nil without one, else
// the folder written in the group, or "" when it is the next word. -S (a suffix) ends the group.
func groupTarget(t string) *string {
	if !strings.HasPrefix(t, "-") || strings.HasPrefix(t, "--") {
		return nil
	}
	for j := 1; j < len(t); j++ {
		switch t[j] {
		case 'S':
			return nil
		case 't':
			rest := t[j+1:]
			return &rest
		}
	}
	return nil
}

// linkFlags reads one word of ln or cp for the options that make links: whether it makes links (cp -l,
// -s, --link, --symbolic-link) and whether they are symbolic (ln -s, --symbolic; cp -s).
func linkFlags(name, t string) (linking, symbolic bool) {
	switch {
	case strings.HasPrefix(t, "--") && len(t) > 2:
		opt, _, _ := strings.Cut(t[2:], "=")
		if name == "ln" {
			return false, len(opt) > 1 && strings.HasPrefix("symbolic", opt)
		}
		sym := len(opt) > 1 && strings.HasPrefix("symbolic-link", opt)
		return sym || len(opt) > 1 && strings.HasPrefix("link", opt), sym
	case strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && len(t) > 1:
		for _, c := range t[1:] {
			if c == 'S' || c == 't' { // the rest of the group is the option's argument (a suffix, a folder)
				break
			}
			linking = linking || name == "cp" && (c == 'l' || c == 's')
			symbolic = symbolic || c == 's'
		}
	}
	return linking, symbolic
}

// linkSources are the files links made by ln or cp lead to, to be judged as written. A symbolic link's
// relative target is read from the folder the link stands in, which is the destination's folder, or
// the destination itself when it is a folder (the hook does not know which), or the command's folder
// (ln -r); each reading is returned.
func linkSources(ops []word, dest *word, symbolic bool) []word {
	if !symbolic {
		return ops
	}
	var out []word
	for _, o := range ops {
		out = append(out, o)
		if dest != nil && !filepath.IsAbs(o.text) {
			dyn := o.dynamic || dest.dynamic
			out = append(out, word{text: layout.Join(filepath.Dir(dest.text), o.text), dynamic: dyn},
				word{text: layout.Join(dest.text, o.text), dynamic: dyn})
		}
	}
	return out
}

// awkInPlace returns the files gawk edits in place (-i inplace, -iinplace, --include=inplace, a path to
// inplace.awk): its operands after the program text, unless -f, -e, -E, --file, --source or --exec gave
// the program. Options are read as gawk reads them: a letter that takes an argument ends its group, and
// a long option may be abbreviated.
func awkInPlace(args []word) []word {
	inPlace, program := false, false
	var ops []word
	include := func(v string) { inPlace = inPlace || strings.TrimSuffix(filepath.Base(v), ".awk") == "inplace" }
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(t, "--"):
			opt, val, valued := strings.Cut(t[2:], "=")
			full := longOption(gawkLong, opt)
			if gawkValued[full] && !valued && i+1 < len(args) {
				val = args[i+1].text
				i++
			}
			switch full {
			case "include":
				include(val)
			case "file", "source", "exec":
				program = true
			}
		case strings.HasPrefix(t, "-") && t != "-":
			for j := 1; j < len(t); j++ {
				c := t[j]
				if strings.IndexByte("fveEFil", c) < 0 {
					continue
				}
				val := t[j+1:]
				if val == "" && i+1 < len(args) {
					val = args[i+1].text
					i++
				}
				if c == 'i' {
					include(val)
				}
				program = program || c == 'f' || c == 'e' || c == 'E'
				break
			}
		case !program:
			program = true // the program text
		default:
			ops = append(ops, args[i])
		}
	}
	if !inPlace {
		return nil
	}
	return ops
}

// gawkLong are gawk's long options, for reading their abbreviations; gawkValued those that take the next
// word as their argument.
var (
	gawkLong = []string{"assign", "bignum", "characters-as-bytes", "copyright", "csv", "debug", "dump-variables", "exec",
		"field-separator", "file", "gen-pot", "help", "include", "lint", "lint-old", "load", "no-optimize", "non-decimal-data",
		"optimize", "persist", "posix", "pretty-print", "profile", "re-interval", "sandbox", "source", "traditional",
		"use-lc-numeric", "version"}
	gawkValued = map[string]bool{"assign": true, "exec": true, "field-separator": true, "file": true, "include": true, "load": true, "source": true}
)

// longOption is the option of names that opt spells whole or abbreviates unambiguously, as getopt_long
// reads it, or "".
func longOption(names []string, opt string) string {
	found := ""
	for _, n := range names {
		if n == opt {
			return n
		}
		if opt != "" && strings.HasPrefix(n, opt) {
			if found != "" {
				return ""
			}
			found = n
		}
	}
	return found
}

// sortOutput returns the file sort writes its result to (-o FILE, -oFILE, -uo FILE, --output=FILE and
// --output's abbreviations), or nil. A letter that takes an argument (-k, -t, -S, -T) ends its group.
func sortOutput(args []word) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			return out
		case strings.HasPrefix(t, "--"):
			opt, val, valued := strings.Cut(t[2:], "=")
			if opt == "" || !strings.HasPrefix("output", opt) {
				continue
			}
			if valued {
				out = append(out, word{text: val, dynamic: args[i].dynamic})
			} else if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		case strings.HasPrefix(t, "-") && t != "-":
			for j := 1; j < len(t); j++ {
				c := t[j]
				if strings.IndexByte("oktST", c) < 0 {
					continue
				}
				rest := t[j+1:]
				switch {
				case c == 'o' && rest != "":
					out = append(out, word{text: rest, dynamic: args[i].dynamic})
				case rest != "" || i+1 >= len(args):
				case c == 'o':
					out = append(out, args[i+1])
					i++
				default:
					i++
				}
				break
			}
		}
	}
	return out
}

// inPlaceFiles returns the files a sed or perl command edits in place, or nil when it edits none. The
// options are read as the program reads them: -i anywhere in a flag group (-i, -i.bak, -Ei, -ni, -pi,
// -lpi), sed's --in-place[=SUFFIX] and its abbreviations (--in-pl); a letter that takes an argument ends
// the group (sed -es/i/x/ is a script, not -i). The first operand is the script unless -e or -f gave one.
func inPlaceFiles(name string, args []word) []word {
	inPlace, script := false, false
	var ops []word
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(t, "--") && name == "sed":
			opt, _, valued := strings.Cut(t[2:], "=")
			switch {
			case opt == "":
			case strings.HasPrefix("in-place", opt):
				inPlace = true
			case strings.HasPrefix("expression", opt), len(opt) > 1 && strings.HasPrefix("file", opt), strings.HasPrefix("line-length", opt):
				script = script || opt[0] != 'l'
				if !valued {
					i++
				}
			}
		case strings.HasPrefix(t, "-") && t != "-":
			in, gaveScript, next := flagGroup(name, t[1:])
			inPlace, script = inPlace || in, script || gaveScript
			if next {
				i++
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !inPlace {
		return nil
	}
	if !script && len(ops) > 0 {
		ops = ops[1:]
	}
	return ops
}

// flagGroup reads one group of single-letter options of sed or perl (without its dash): whether it holds
// -i, whether it gives the script (-e, -f, perl's -E), and whether the next word is an option's argument.
func flagGroup(name, g string) (inPlace, script, next bool) {
	for j := 0; j < len(g); j++ {
		c := g[j]
		rest := g[j+1:]
		switch {
		case c == 'i': // what follows is the backup's suffix
			return true, false, false
		case c == 'e' || c == 'f' && name == "sed" || c == 'E' && name == "perl":
			return false, true, rest == ""
		case name == "sed" && c == 'l':
			return false, false, rest == ""
		case name == "perl" && c == 'I':
			return false, false, rest == ""
		case name == "perl" && (strings.IndexByte("MmxFD", c) >= 0 || c == 'd' && strings.HasPrefix(rest, ":")):
			return false, false, false // the rest of the group is the option's argument
		case name == "perl" && c == 'C': // -C takes a number or letters of its own (i among them)
			for j+1 < len(g) && strings.IndexByte("0123456789IOEioSDALa", g[j+1]) >= 0 {
				j++
			}
		}
	}
	return false, false, false
}

// protectedWrite says why a path an agent's command writes may only be written by the box, or "". cwd is
// the folder the command runs in; a path built at run time is judged by what it spells.
func (s *session) protectedWrite(t word, cwd string) string {
	p := t.text
	if rest, ok := strings.CutPrefix(p, "~/"); ok && !t.dynamic {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, rest)
		}
	}
	if t.dynamic || strings.HasPrefix(p, "~") {
		low := strings.ToLower(filepath.ToSlash(p))
		for _, part := range []string{"/.box/", "/.git/", "switches.card", "settings.card", "/approvals/"} {
			if strings.Contains(low+"/", part) || strings.HasPrefix(low, strings.TrimPrefix(part, "/")) {
				return "it names " + strings.Trim(part, "/") + ", which only the box writes"
			}
		}
		return ""
	}
	// The shell's reading (link/.. climbs from the link's target) and a cleaning tool's (link/.. is the
	// link's folder): a write either way may not land where only the box writes.
	p = layout.Join(cwd, p)
	_, why := s.guardHost(layout.Resolve(p), layout.Resolve(filepath.Clean(p)))
	return why
}

// preBash denies a shell command that decides for the owner or writes where only the box writes. Unlike
// the search and scope answers, these denials are given every time.
func (s *session) preBash() (Result, bool) {
	cmd := string(s.in.toolArgs().Command)
	if strings.TrimSpace(cmd) == "" {
		return Result{}, false
	}
	cwd := s.in.Cwd
	var lostTo []word // the cds the hook could not follow (cd $DIR, cd -): later paths are judged by what they spell
	for _, c := range parseShell(cmd) {
		if v := decidesForOwner(c); v != "" {
			return deny(Trim(fmt.Sprintf("`%s` decides for the owner: approving cards, unfreezing, setting switches, making or revoking keys, "+
				"setting the brain, adding a backup, leaving safe mode, turning builds back on and adding routines are the owner's to do, "+
				"in the box's web UI or their own terminal. Ask the owner to do it. Nothing ran.", v), CapWrite)), true
		}
		if why := s.gitConfigWrite(c, cwd, lostTo); why != "" {
			return deny(Trim(fmt.Sprintf("This command changes the box's git configuration: %s. Nothing ran.", why), CapWrite)), true
		}
		targets, cd := writeTargets(c)
		for _, t := range targets {
			if lostTo != nil && !filepath.IsAbs(t.text) && !strings.HasPrefix(t.text, "~") {
				t.dynamic = true // against a folder the hook does not know: judged by what it spells
			}
			if why := s.protectedWrite(t, cwd); why != "" {
				return deny(Trim(fmt.Sprintf("This command writes %s: %s. Nothing ran.", t.text, why), CapWrite)), true
			}
		}
		if cd != nil {
			dir, known := chdir(cwd, *cd, physicalCd(c))
			cwd = dir
			if !known {
				lostTo = append(lostTo, *cd)
			} else if filepath.IsAbs(cd.text) || strings.HasPrefix(cd.text, "~") {
				lostTo = nil // a cd to an absolute folder is followed again
			}
		}
	}
	return Result{}, false
}

// chdir is the folder `cd dir` leaves the shell in, and whether the hook can tell it (not for a folder
// built at run time, `cd -` or a lone pushd). By default the shell's cd is logical: dir/.. is taken from
// the text (cd link/.. stays where it was), and links are followed later, when a path is used. cd -P
// follows links first, as the kernel does.
func chdir(cwd string, dir word, physical bool) (string, bool) {
	p := dir.text
	if dir.dynamic || p == "-" || strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/") {
		return cwd, false
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return cwd, false
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if physical {
		return layout.Resolve(layout.Join(cwd, p)), true
	}
	return filepath.Clean(layout.Join(cwd, p)), true
}

// physicalCd reports whether a cd or pushd command asks for the physical folder (-P; a later -L undoes it).
func physicalCd(c simpleCmd) bool {
	physical := false
	for _, w := range stripPrefix(c.words)[1:] {
		t := w.text
		if t == "--" || !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		for _, r := range t[1:] {
			switch r {
			case 'P':
				physical = true
			case 'L':
				physical = false
			}
		}
	}
	return physical
}

// gitRemoteWrites are the `git remote` subcommands that change the repository's configuration.
var gitRemoteWrites = map[string]bool{"add": true, "set-url": true, "rename": true, "remove": true, "rm": true, "set-head": true, "set-branches": true}

// gitConfigReads are the `git config` forms that only read (the subcommands of git 2.46 and the options).
var gitConfigReads = map[string]bool{"get": true, "list": true, "--get": true, "--get-all": true, "--get-regexp": true, "--get-urlmatch": true,
	"--list": true, "-l": true, "--get-color": true, "--get-colorbool": true}

// gitConfigWrite says why a git command changes the box repository's configuration, or "": `git
// remote add/set-url/rename/remove …` and a `git config` that writes, run in the box (after cd, -C,
// --git-dir, GIT_DIR=) or aimed at its .git/config with --file. A backup's address and the repository's
// settings are the owner's to change (`box backup`): a remote moved by an agent would receive the box.
func (s *session) gitConfigWrite(c simpleCmd, cwd string, lostTo []word) string {
	var gitDir *word
	for _, w := range c.words {
		if v, ok := strings.CutPrefix(w.text, "GIT_DIR="); ok {
			gitDir = &word{text: v, dynamic: w.dynamic}
		}
		if v, ok := strings.CutPrefix(w.text, "GIT_CONFIG="); ok {
			gitDir = &word{text: v, dynamic: w.dynamic}
		}
	}
	w := stripPrefix(c.words)
	if len(w) == 0 || !spells(word{text: filepath.Base(w[0].text), glob: w[0].glob}, "git") {
		return ""
	}
	dir := cwd
	at := func(x word, base string) string {
		if x.dynamic {
			return ""
		}
		p := x.text
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, rest)
			}
		}
		return layout.Resolve(layout.Join(base, p))
	}
	inBox := func(p string) bool { return p != "" && within(s.root, p) }
	unknown := lostTo != nil // a -C built at run time, or a cd the hook could not follow: judged by what it spells
	i := 1
options: // git's own options, before its subcommand
	for ; i < len(w); i++ {
		t := w[i].text
		switch {
		case t == "-C" && i+1 < len(w):
			unknown = unknown || w[i+1].dynamic
			dir = at(w[i+1], dir)
			i++
		case (t == "--git-dir" || t == "--work-tree") && i+1 < len(w):
			gitDir = &w[i+1]
			i++
		case strings.HasPrefix(t, "--git-dir="):
			gitDir = &word{text: strings.TrimPrefix(t, "--git-dir="), dynamic: w[i].dynamic}
		case t == "-c" && i+1 < len(w):
			i++
		case strings.HasPrefix(t, "-"):
		default:
			break options
		}
	}
	if i >= len(w) {
		return ""
	}
	target := inBox(dir) || unknown && s.spellsBox(append(lostTo, w...))
	if gitDir != nil {
		target = inBox(at(*gitDir, dir)) || gitDir.dynamic && s.spellsBox(w)
	}
	args := w[i+1:]
	switch w[i].text {
	case "remote":
		for _, a := range args {
			if strings.HasPrefix(a.text, "-") {
				continue
			}
			if gitRemoteWrites[a.text] && target {
				return "`git remote " + a.text + "` changes where the box's backups go; the owner adds and removes backups (box backup)"
			}
			return ""
		}
	case "config":
		var pos []word
		write := false
		for j := 0; j < len(args); j++ {
			t := args[j].text
			switch {
			case (t == "--file" || t == "-f") && j+1 < len(args):
				if p := at(args[j+1], dir); inBox(p) || args[j+1].dynamic && strings.Contains(args[j+1].text, ".git") {
					target = true
				} else {
					target = false
				}
				j++
			case strings.HasPrefix(t, "--file="):
				target = inBox(at(word{text: strings.TrimPrefix(t, "--file="), dynamic: args[j].dynamic}, dir))
			case t == "--global" || t == "--system":
				target = false
			case gitConfigReads[t]:
				return ""
			case strings.HasPrefix(t, "--unset") || strings.HasPrefix(t, "--add") || strings.HasPrefix(t, "--replace") ||
				strings.HasPrefix(t, "--rename-section") || strings.HasPrefix(t, "--remove-section") || t == "-e" || t == "--edit":
				write = true
			case strings.HasPrefix(t, "-"):
			default:
				pos = append(pos, args[j])
			}
		}
		if len(pos) > 0 && !write {
			switch pos[0].text {
			case "set", "unset", "rename-section", "remove-section", "edit":
				write = true
			default:
				write = len(pos) > 1
			}
		}
		if write && target {
			return "`git config` writes the box's .git/config, where its backups' addresses live; the owner changes backups (box backup)"
		}
	}
	return ""
}

// spellsBox reports whether a command's words name the box's folder or a .box/.git path: how a path built
// at run time is judged.
func (s *session) spellsBox(w []word) bool {
	real, err := filepath.EvalSymlinks(s.root)
	if err != nil {
		real = s.root
	}
	for _, x := range w {
		if strings.Contains(x.text, s.root) || strings.Contains(x.text, real) || strings.Contains(x.text, "BOX") {
			return true
		}
	}
	return false
}
