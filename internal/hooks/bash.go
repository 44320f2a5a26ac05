package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
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
	tree    bool // a folder the command writes or removes anything under (cp -r, rsync -a, find -delete)
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
	w, _, run := commandOf(c.words) // trap's handler, watch's command, flock -c's and env -S's run in a shell of their own
	for _, script := range run {
		parseInto(script, p.depth+1, p.out)
	}
	if len(w) > 1 && filepath.Base(w[0].text) == "trap" {
		handler := w[1]
		if handler.text == "--" && len(w) > 2 {
			handler = w[2]
		}
		parseInto(handler.text, p.depth+1, p.out)
	}
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
	if limit <= 0 { // a branch past the limit is never walked: a word of many lists would take exponential time
		return nil
	}
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
	"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true, "until": true, "fi": true, "done": true,
	"fakeroot": true, "runuser": true, "chroot": true, "unshare": true, "firejail": true, "valgrind": true, "ltrace": true,
	"systemd-run": true, "parallel": true}

// stripPrefix drops what comes before the command a simple command runs: assignments (NAME=value),
// wrappers and their options and operands (wrapperOpts: timeout's duration, nice -n N, flock's file).
func stripPrefix(w []word) []word {
	rest, _, _ := commandOf(w)
	return rest
}

// commandOf is stripPrefix, the folders the wrappers run the command in (env -C DIR, sudo -D DIR), and
// the scripts they hand a shell of their own (watch's command, flock's -c, env -S).
func commandOf(w []word) (rest, dirs []word, scripts []string) {
	for len(w) > 0 {
		t := w[0].text
		name := filepath.Base(t)
		switch {
		case isAssignment(t):
			w = w[1:]
		case wrappers[name] && len(w) > 1:
			wo := wrapperOpts[name]
			wo.spec.first = true // a wrapper's options end at its command (nohup sed -i: the -i is sed's)
			opts, ops := wo.spec.read(w[1:])
			for _, o := range opts {
				switch {
				case o.name == "chdir" || name == "env" && o.name == "C" || name == "sudo" && o.name == "D":
					dirs = append(dirs, o.val)
				case name == "env" && (o.name == "S" || o.name == "split-string"), (name == "flock" || name == "runuser") && (o.name == "c" || o.name == "command"):
					scripts = append(scripts, o.val.text)
				}
			}
			if name == "env" && len(ops) > 1 && ops[0].text == "-" { // env - is env -i
				ops = ops[1:]
			}
			for n := 0; n < wo.operands && len(ops) > 1; n++ {
				ops = ops[1:]
			}
			if name == "flock" && len(ops) > 1 && (ops[0].text == "-c" || ops[0].text == "--command") { // flock FILE -c CMD
				scripts = append(scripts, ops[1].text)
			}
			if name == "runuser" && len(ops) > 2 && (ops[1].text == "-c" || ops[1].text == "--command") { // runuser USER -c CMD
				scripts = append(scripts, ops[2].text)
			}
			if name == "parallel" { // parallel CMD ::: ARGS: the command ends where its arguments begin
				for i, x := range ops {
					if strings.HasPrefix(x.text, ":::") {
						ops = ops[:i]
						break
					}
				}
			}
			for len(ops) > 1 && isDuration(ops[0].text) { // timeout 10, watch's interval spelt apart
				ops = ops[1:]
			}
			if name == "watch" && len(ops) > 0 { // watch runs its words through sh -c
				parts := make([]string, len(ops))
				for i, x := range ops {
					parts[i] = x.text
				}
				scripts = append(scripts, strings.Join(parts, " "))
			}
			w = ops
		default:
			return w, dirs, scripts
		}
	}
	return w, dirs, scripts
}

// wrapperOpts are how the wrappers' options are read (which take an argument; they end at the command)
// and how many operands come before the command they run. A wrapper not here takes no option argument.
var wrapperOpts = map[string]struct {
	spec     optSpec
	operands int
}{
	"env": {spec: optSpec{short: "uCS", long: longs("unset:", "chdir:", "split-string:", "ignore-environment", "null", "argv0:",
		"default-signal", "ignore-signal", "block-signal", "list-signal-handling", "debug", "help", "version")}},
	"sudo": {spec: optSpec{short: "ugCDhpUrtTR", long: longs("user:", "group:", "close-from:", "chdir:", "host:", "prompt:",
		"other-user:", "role:", "type:", "command-timeout:", "chroot:", "login", "shell", "preserve-env", "non-interactive",
		"background", "edit", "help", "version")}},
	"doas":    {spec: optSpec{short: "uC"}},
	"timeout": {spec: optSpec{short: "sk", long: longs("signal:", "kill-after:", "preserve-status", "foreground", "verbose")}, operands: 1},
	"nice":    {spec: optSpec{short: "n", long: longs("adjustment:")}},
	"ionice":  {spec: optSpec{short: "cnp", long: longs("class:", "classdata:", "pid:", "pgid:", "uid:")}},
	"stdbuf":  {spec: optSpec{short: "ioe", long: longs("input:", "output:", "error:")}},
	"chrt":    {spec: optSpec{short: "TPD"}, operands: 1},
	"taskset": {operands: 1},
	"flock":   {spec: optSpec{short: "wEc", long: longs("timeout:", "conflict-exit-code:", "command:")}, operands: 1},
	"xargs": {spec: optSpec{short: "IadELnPs", optional: "iel", long: longs("replace:", "arg-file:", "delimiter:", "eof:",
		"max-lines:", "max-args:", "max-procs:", "max-chars:", "process-slot-var:")}},
	"exec":    {spec: optSpec{short: "a"}},
	"time":    {spec: optSpec{short: "fo", long: longs("format:", "output:")}},
	"watch":   {spec: optSpec{short: "nq", long: longs("interval:", "equexit:")}},
	"strace":  {spec: optSpec{short: "eoOpPsSuUabEIX"}},
	"runuser": {spec: optSpec{short: "ugGcsw", long: longs("user:", "group:", "supp-group:", "login", "command:", "shell:", "whitelist-environment:")}},
	"unshare": {spec: optSpec{short: "SGRw", long: longs("propagation:", "setgroups:", "map-user:", "map-group:", "map-users:",
		"map-groups:", "root:", "wd:", "setuid:", "setgid:", "monotonic:", "boottime:")}},
	"chroot":   {spec: optSpec{long: longs("groups:", "userspec:", "skip-chdir")}, operands: 1},
	"valgrind": {},
	"systemd-run": {spec: optSpec{short: "pEM", long: longs("unit:", "property:", "description:", "slice:", "setenv:", "uid:", "gid:",
		"working-directory:", "machine:", "on-active:", "on-calendar:", "timer-property:")}},
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
var ownerVerbs = [][2]string{{"cards", "approve"}, {"brain", "set"}, {"backup", "add"}, {"backup", "remove"},
	{"safe-mode", "off"}, {"unfreeze", ""}, {"switches", "*"}, {"keys", "*"}, {"builds", "on"}, {"routines", "add"}, {"routines", "on"},
	{"connectors", "call"}, {"connectors", "key"}, // a call runs as the owner; a key is the owner's account
	// An undo puts back what an entry changed (a switch the owner tightened, a build or routine they
	// switched off, a connector's older hosts), a restore a whole older box, and unwire takes these guards
	// out of the agent's settings.
	{"undo", ""}, {"builds", "undo"}, {"restore", ""}, {"unwire", ""}}

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
// operands of tee, cp, mv, install, ln, link, rsync, rm, rmdir, unlink, truncate, shred, touch, mkdir,
// sed -i, perl -i, gawk's in-place edits, sort -o and dd of=, each command's options read as it reads
// them (fileOpts). A cd or pushd is returned as the folder later commands of the line may run in.
func writeTargets(c simpleCmd) (targets []word, cd *chdirTo) {
	targets = append(targets, c.writes...)
	w := stripPrefix(c.words)
	if len(w) == 0 {
		return targets, nil
	}
	name := filepath.Base(w[0].text)
	if (name == "busybox" || name == "coreutils") && len(w) > 1 { // busybox sed …: the applet is the command
		if w = stripPrefix(w[1:]); len(w) == 0 {
			return targets, nil
		}
		name = filepath.Base(w[0].text)
	}
	if name == "find" { // find … -exec CMD … ; or + runs CMD: its targets are the line's
		for _, sub := range findCommands(w[1:]) {
			t, _ := writeTargets(simpleCmd{words: sub})
			targets = append(targets, t...)
		}
		return append(targets, findDeletes(w[1:])...), nil
	}
	if g, ok := strings.CutPrefix(name, "g"); ok && gnuNames[g] { // GNU tools under Homebrew's names: gcp, gmv, gsed
		name = g
	}
	switch name {
	case "sed", "perl":
		return append(targets, inPlaceFiles(name, w[1:])...), nil
	case "awk", "gawk":
		return append(targets, awkInPlace(w[1:])...), nil
	case "sort":
		return append(targets, sortOutput(w[1:])...), nil
	}
	opts, ops := fileOpts[name].read(w[1:])
	switch name {
	case "cd", "pushd", "popd":
		return targets, changesTo(name, opts, ops)
	case "tee", "rm", "rmdir", "unlink", "truncate", "shred", "touch", "mkdir":
		if name == "rm" && slices.ContainsFunc(opts, func(o option) bool { return o.name == "r" || o.name == "R" || o.name == "recursive" }) {
			for i := range ops { // rm -r removes all a folder holds
				ops[i].tree = true
			}
		}
		return append(targets, ops...), nil
	case "dd":
		for _, o := range ops {
			if f, ok := strings.CutPrefix(o.text, "of="); ok {
				targets = append(targets, word{text: f, dynamic: o.dynamic})
			}
		}
		return targets, nil
	case "cp", "mv", "install", "ln", "link", "rsync":
		return append(targets, copyTargets(name, opts, ops)...), nil
	}
	if _, known := fileOpts[name]; !known { // a runner the guard does not know (fakeroot, direnv exec …): its -t DIR
		for i, x := range w {
			switch {
			case (x.text == "-t" || x.text == "--target-directory") && i+1 < len(w):
				targets = append(targets, w[i+1])
			case strings.HasPrefix(x.text, "--target-directory="):
				targets = append(targets, word{text: strings.TrimPrefix(x.text, "--target-directory="), dynamic: x.dynamic})
			}
		}
	}
	return targets, nil
}

// findCommands are the commands find's -exec, -execdir, -ok and -okdir run, each up to its ; or +.
func findCommands(args []word) [][]word {
	var out [][]word
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			out = append(out, args[i+1:j])
			i = j
		}
	}
	return out
}

// findDeletes are the folders find -delete removes files under: its starting points (the words before
// its first test), "." when it names none.
func findDeletes(args []word) []word {
	if !slices.ContainsFunc(args, func(a word) bool { return a.text == "-delete" }) {
		return nil
	}
	var out []word
	i := 0
	for ; i < len(args); i++ { // find's own options come before its starting points: -H -L -P -D x -O3 --
		t := args[i].text
		if t == "-D" {
			i++
		} else if t != "-H" && t != "-L" && t != "-P" && t != "--" && !strings.HasPrefix(t, "-O") {
			break
		}
	}
	for _, a := range args[min(i, len(args)):] {
		if strings.HasPrefix(a.text, "-") || a.text == "(" || a.text == "!" {
			break
		}
		a.tree = true
		out = append(out, a)
	}
	if len(out) == 0 {
		out = append(out, word{text: ".", tree: true})
	}
	return out
}

// gnuNames are the commands the guard reads that Homebrew installs with a g before their names.
var gnuNames = map[string]bool{"sed": true, "awk": true, "sort": true, "cp": true, "mv": true, "install": true, "ln": true, "link": true,
	"tee": true, "rm": true, "rmdir": true, "unlink": true, "truncate": true, "shred": true, "touch": true, "mkdir": true, "dd": true}

// copyTargets are what cp, mv, install, ln, link and rsync write: the destination, and the file each
// operand becomes in it when it is a folder (the hook does not know which); mv's sources, which it
// removes; install -d's folders; and what links lead to (cp -l, -s, ln, link), written next through them.
func copyTargets(name string, opts []option, ops []word) []word {
	var dest *word
	destAfter := false
	linking, symbolic, dirs, recursive, onto := name == "ln" || name == "link", false, false, false, false
	for _, o := range opts {
		switch o.name {
		case "r", "R", "a", "recursive", "archive":
			recursive = name == "cp" || name == "rsync"
		case "T", "no-target-directory":
			onto = name == "cp" // cp -T SRC DEST: SRC's contents become DEST's
		}
		switch {
		case o.name == "target-directory" || o.name == "t" && name != "rsync":
			v := o.val
			dest, destAfter = &v, o.after
		case name == "cp" && (o.name == "l" || o.name == "link"):
			linking = true
		case name == "cp" && (o.name == "s" || o.name == "symbolic-link"), name == "ln" && (o.name == "s" || o.name == "symbolic"):
			linking, symbolic = true, true
		case name == "install" && (o.name == "d" || o.name == "directory"):
			dirs = true
		}
	}
	if dirs {
		return ops
	}
	var out []word
	if dest != nil && destAfter && len(ops) > 1 { // -t after an operand: a cp that stops reading options there (BSD, POSIXLY_CORRECT) copies to the last
		out = append(out, copyTargets(name, nil, ops)...)
	}
	if dest == nil && len(ops) > 1 {
		dest, ops = &ops[len(ops)-1], ops[:len(ops)-1]
	}
	if name == "mv" { // what it moves away, with all a folder holds
		for _, o := range ops {
			o.tree = true
			out = append(out, o)
		}
	}
	if linking { // a link made to a file only the box writes is a way to write it next
		out = append(out, linkSources(ops, dest, symbolic)...)
	}
	if dest == nil { // ln -s TARGET: the link is made here under the target's name
		for _, o := range ops {
			out = append(out, word{text: filepath.Base(o.text), dynamic: o.dynamic})
		}
		return out
	}
	// A folder copied recursively lands, with all it holds, at what it becomes in the destination, or in
	// the destination itself when its contents are what is copied (cp -T, SRC/., rsync's SRC/).
	d := *dest
	for _, o := range ops {
		d.tree = d.tree || recursive && (onto || o.text == "." || strings.HasSuffix(o.text, "/.") || name == "rsync" && strings.HasSuffix(o.text, "/"))
	}
	out = append(out, d)
	for _, o := range ops {
		// The file each operand becomes in the folder: a pattern (cp /tmp/cfg/* _config/) stays one, so it
		// is judged in all its matches.
		out = append(out, word{text: layout.Join(dest.text, filepath.Base(o.text)), dynamic: o.dynamic || dest.dynamic, glob: o.glob || dest.glob, tree: recursive})
	}
	return out
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

// preBash denies a shell command that decides for the owner or writes where only the box writes. Unlike
// the search and scope answers, these denials are given every time.
func (s *session) preBash() (Result, bool) {
	cmd := string(s.in.toolArgs().Command)
	if strings.TrimSpace(cmd) == "" {
		return Result{}, false
	}
	cmds := parseShell(cmd)
	for _, c := range cmds {
		if v := decidesForOwner(c); v != "" {
			return deny(Trim(fmt.Sprintf("`%s` decides for the owner: approving cards, unfreezing, setting switches, making or revoking keys, "+
				"setting the brain, adding or removing a backup, leaving safe mode, turning builds back on, adding routines, undoing, restoring "+
				"and unwiring are the owner's to do, "+
				"in the box's web UI or their own terminal. Ask the owner to do it. Nothing ran.", v), CapWrite)), true
		}
	}
	lines := readLine(cmds)
	at := s.foldersOf(lines)
	// The work the guard would do: each path part looked up in each folder, a pattern's matches, each git
	// command in each folder.
	paths, parts, gits := 0, 0, 0
	for _, l := range lines {
		for _, t := range l.targets {
			n := 1
			if t.glob {
				n = globCost
			}
			paths, parts = paths+n, parts+n*(1+strings.Count(t.text, "/"))
		}
		if isGit(l.cmd) {
			gits++
		}
	}
	folders := len(at.dirs) + len(at.lost) + 2
	if parts*folders > maxJudged || (paths+gits)*folders > maxJudged/10 || at.tooMany {
		return deny(Trim(fmt.Sprintf("This command writes %d paths from %d folders, more than the guard reads in its time. Split it into shorter commands. Nothing ran.",
			paths, folders-2), CapWrite)), true
	}
	for _, l := range lines {
		if why := s.gitWriteAt(l.cmd, at); why != "" {
			return deny(Trim(fmt.Sprintf("This command changes the box's repository: %s. Nothing ran.", why), CapWrite)), true
		}
		for _, t := range l.targets {
			if why := s.protectedWriteAt(t, at); why != "" {
				return deny(Trim(fmt.Sprintf("This command writes %s: %s. Nothing ran.", t.text, why), CapWrite)), true
			}
		}
	}
	return Result{}, false
}

// isGit reports whether a command runs git.
func isGit(c simpleCmd) bool {
	w := stripPrefix(c.words)
	return len(w) > 0 && spells(word{text: filepath.Base(w[0].text), glob: w[0].glob}, "git")
}

// maxJudged bounds the path parts times folders one command line's guard follows (each part a file
// lookup), and a tenth of it the paths times folders (each some 45 µs, measured: 20,000 take about a
// second): past either the line is denied as too long to read, since a hook that runs out of time
// answers nothing and the command would run.
const maxJudged = 200_000

// gitRemoteWrites are the `git remote` subcommands that change the repository's configuration.
var gitRemoteWrites = map[string]bool{"add": true, "set-url": true, "rename": true, "remove": true, "rm": true, "set-head": true, "set-branches": true}

// gitOnBox are the git subcommands an agent may run on the box, each with what its arguments may say (nil:
// anything): they read, or add to the history (commit, tag, a new branch) without changing what is
// there. Anything else is denied on the box: a checkout of an older switches card, `git rm` of it (which
// then reads as the defaults), a reset, a stash, a linked worktree (which an erase refuses to start
// with), a push of the whole box somewhere, and an alias or an external command the guard cannot read by
// its name. The box commits; an agent writes files, which the write guard reads.
var gitOnBox = map[string]func(args []word) bool{
	"log": nil, "show": nil, "diff": nil, "status": nil, "commit": nil, "tag": nil, "rev-parse": nil, "ls-files": nil,
	"ls-tree": nil, "cat-file": nil, "blame": nil, "annotate": nil, "grep": nil, "describe": nil, "shortlog": nil,
	"show-ref": nil, "for-each-ref": nil, "rev-list": nil, "name-rev": nil, "whatchanged": nil, "count-objects": nil,
	"check-ignore": nil, "check-attr": nil, "diff-tree": nil, "diff-files": nil, "diff-index": nil, "merge-base": nil,
	"fsck": nil, "archive": nil, "format-patch": nil, "help": nil, "version": nil, "var": nil,
	"config": nil, "remote": nil, // read here; their writes are judged below
	"branch": func(a []word) bool {
		return !hasAny(a, "-m", "-M", "--move", "-c", "-C", "--copy", "-d", "-D", "--delete", "-f", "--force")
	},
	"reflog":          func(a []word) bool { return len(a) == 0 || a[0].text == "show" || strings.HasPrefix(a[0].text, "-") },
	"stash":           func(a []word) bool { return len(a) > 0 && (a[0].text == "list" || a[0].text == "show") },
	"worktree":        func(a []word) bool { return len(a) > 0 && a[0].text == "list" },
	"sparse-checkout": func(a []word) bool { return len(a) > 0 && a[0].text == "list" },
	"bisect": func(a []word) bool {
		return len(a) > 0 && (a[0].text == "log" || a[0].text == "view" || a[0].text == "visualize")
	},
	"symbolic-ref": func(a []word) bool { // reading names one ref; setting names two, deleting says -d
		refs := 0
		for _, x := range a {
			if x.text == "-d" || x.text == "--delete" {
				return false
			}
			if !strings.HasPrefix(x.text, "-") {
				refs++
			}
		}
		return refs < 2
	},
}

// hasAny reports whether one of the words is one of the options (a value after = counts as its option).
func hasAny(a []word, opts ...string) bool {
	return slices.ContainsFunc(a, func(x word) bool {
		name, _, _ := strings.Cut(x.text, "=")
		return slices.Contains(opts, name)
	})
}

// gitConfigReads are the `git config` forms that only read (the subcommands of git 2.46 and the options).
var gitConfigReads = map[string]bool{"get": true, "list": true, "--get": true, "--get-all": true, "--get-regexp": true, "--get-urlmatch": true,
	"--list": true, "-l": true, "--get-color": true, "--get-colorbool": true}

// gitWrite says why a git command changes the box's repository, or "": its files, index, history or
// worktrees (all but gitOnBox, on the box), or its configuration: `git
// remote add/set-url/rename/remove …` and a `git config` that writes, run in the box (after cd, -C,
// --git-dir, GIT_DIR=) or aimed at its .git/config with --file. A backup's address and the repository's
// settings are the owner's to change (`box backup`): a remote moved by an agent would receive the box.
// A path the hook cannot place counts as the box's when the line names the box elsewhere (lineNamesBox:
// X=~/box; git -C "$X" …).
func (s *session) gitWrite(c simpleCmd, cwd string, lost *string, lineNamesBox bool) string {
	var gitDir, workTree, global, system *word
	for _, w := range c.words {
		name, v, _ := strings.Cut(w.text, "=")
		val := &word{text: v, dynamic: w.dynamic}
		switch name {
		case "GIT_DIR", "GIT_CONFIG":
			gitDir = val
		case "GIT_WORK_TREE":
			workTree = val
		case "GIT_CONFIG_GLOBAL":
			global = val
		case "GIT_CONFIG_SYSTEM":
			system = val
		}
	}
	if !isGit(c) {
		return ""
	}
	w := stripPrefix(c.words)
	dir := cwd // "" after a cd the hook could not follow
	at := func(x word, base string) string {
		p, known := homePath(x)
		if !known || base == "" && !filepath.IsAbs(p) {
			return ""
		}
		return layout.Resolve(layout.Join(base, p))
	}
	inBox := func(p string) bool { return p != "" && within(s.root, p) }
	// A path the hook cannot place (built at run time, or relative after a cd it could not follow) is
	// judged by what it and that cd spell.
	unplaced := func(x word, base string) bool { return x.dynamic || at(x, base) == "" && base == "" }
	unknown := lost != nil // a -C built at run time, or a cd the hook could not follow
	alias := false         // -c alias.NAME=…: a subcommand the hook cannot read by its name
	i := 1
options: // git's own options, before its subcommand
	for ; i < len(w); i++ {
		t := w[i].text
		switch {
		case t == "-C" && i+1 < len(w):
			unknown = unplaced(w[i+1], dir) || unknown && !filepath.IsAbs(w[i+1].text)
			dir = at(w[i+1], dir)
			i++
		case t == "--git-dir" && i+1 < len(w):
			gitDir = &w[i+1]
			i++
		case t == "--work-tree" && i+1 < len(w):
			workTree = &w[i+1]
			i++
		case strings.HasPrefix(t, "--git-dir="):
			gitDir = &word{text: strings.TrimPrefix(t, "--git-dir="), dynamic: w[i].dynamic}
		case strings.HasPrefix(t, "--work-tree="):
			workTree = &word{text: strings.TrimPrefix(t, "--work-tree="), dynamic: w[i].dynamic}
		case (t == "-c" || t == "--config-env") && i+1 < len(w):
			alias = alias || strings.HasPrefix(strings.ToLower(w[i+1].text), "alias.")
			i++
		case strings.HasPrefix(t, "--config-env="):
			alias = alias || strings.HasPrefix(strings.ToLower(strings.TrimPrefix(t, "--config-env=")), "alias.")
		case (t == "--namespace" || t == "--super-prefix" || t == "--exec-path" || t == "--list-cmds") && i+1 < len(w):
			i++
		case strings.HasPrefix(t, "-"):
		default:
			break options
		}
	}
	if i >= len(w) {
		return ""
	}
	onBox := func(x *word) bool {
		return x != nil && (inBox(at(*x, dir)) || unplaced(*x, dir) && (lineNamesBox || s.spellsBox(append(w, *x), lost)))
	}
	target := inBox(dir) || unknown && (lineNamesBox || s.spellsBox(w, lost))
	// What git changes is the work tree's and the git dir's: the ones named, else the folder git runs in
	// (also with only a git dir named).
	if sub := w[i].text; target || onBox(gitDir) || onBox(workTree) {
		reads, known := gitOnBox[sub]
		switch {
		case alias:
			return "`git -c alias.…` runs a subcommand the guard cannot read on the box; run git's own subcommands"
		case !known:
			return "`git " + sub + "` is not one the box lets an agent run on it (it may change the box's files, history or where they go, or name a command the guard cannot read); read with git log, show and diff, and write files (the box records them)"
		case reads != nil && !reads(w[i+1:]):
			return "`git " + sub + "` in this form changes the box's files or history, which only the box commits; read with git log, show and diff, and write files (the box records them)"
		}
	}
	if gitDir != nil {
		target = onBox(gitDir)
	}
	// configFile reports whether git config's --file names the box's configuration.
	configFile := func(f word) bool {
		if unplaced(f, dir) {
			return slices.Contains(strings.Split(filepath.ToSlash(f.text), "/"), ".git") && (inBox(dir) || s.spellsBox(append(w, f), lost))
		}
		return inBox(at(f, dir))
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
				target = configFile(args[j+1])
				j++
			case strings.HasPrefix(t, "--file="):
				target = configFile(word{text: strings.TrimPrefix(t, "--file="), dynamic: args[j].dynamic})
			case t == "--global": // the owner's own file, unless GIT_CONFIG_GLOBAL names another
				target = global != nil && configFile(*global)
			case t == "--system":
				target = system != nil && configFile(*system)
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

// spellsBox reports whether a command's words, or the cd the hook could not follow before it (lost, when
// one was), name the box's folder or a variable named for it ($BOX_DIR, ${BOX}): how a path built at run
// time is judged.
func (s *session) spellsBox(w []word, lost *string) bool {
	real := s.realRoot()
	texts := make([]string, 0, len(w)+1)
	for _, x := range w {
		texts = append(texts, x.text)
	}
	if lost != nil {
		texts = append(texts, *lost)
	}
	for _, t := range texts {
		if isAssignment(t) { // X=~/box: the value
			_, t, _ = strings.Cut(t, "=")
		}
		t = expandHome(t)
		if namesFolder(t, s.root) || namesFolder(t, real) || namesBoxVariable(t) {
			return true
		}
	}
	return false
}

// namesFolder reports whether text holds the folder dir as a whole name: dir, then its end, a slash or a
// character no file name here goes on with (`~/box-site` does not name `~/box`).
func namesFolder(text, dir string) bool {
	for i := 0; dir != ""; {
		j := strings.Index(text[i:], dir)
		if j < 0 {
			return false
		}
		end := i + j + len(dir)
		if end == len(text) || !isNameByte(text[end]) {
			return true
		}
		i += j + 1
	}
	return false
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// realRoot is the box's folder with its links followed, read once per session.
func (s *session) realRoot() string {
	if s.real == "" {
		s.real = s.root
		if r, err := filepath.EvalSymlinks(s.root); err == nil {
			s.real = r
		}
	}
	return s.real
}

// namesBoxVariable reports whether text uses a shell variable named for the box ($BOX_DIR, ${MY_BOX},
// $THEBOX), not one of the words that merely hold "box" (SANDBOX, DROPBOX, INBOX, TOOLBOX …).
func namesBoxVariable(text string) bool {
	for _, m := range shellVariable.FindAllStringSubmatch(text, -1) {
		name := strings.ToUpper(m[1])
		for _, w := range notBoxes {
			name = strings.ReplaceAll(name, w, "")
		}
		if strings.Contains(name, "BOX") {
			return true
		}
	}
	return false
}

// shellVariable is $NAME or ${NAME…}, the name its submatch.
var shellVariable = lazyregexp.New(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// notBoxes are words holding BOX that name something else.
var notBoxes = []string{"SANDBOX", "DROPBOX", "INBOX", "OUTBOX", "MAILBOX", "TOOLBOX", "CHECKBOX", "TEXTBOX", "LISTBOX", "COMBOBOX",
	"XBOX", "BBOX", "HITBOX", "SKYBOX", "JUKEBOX", "SOAPBOX", "LOCKBOX", "LIGHTBOX", "VIRTUALBOX", "VBOX", "BOXSHADOW"}
