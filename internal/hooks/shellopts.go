package hooks

import (
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
)

// optSpec is how a command's options are read, as GNU getopt_long reads them: short letters that take an
// argument (the rest of their group, else the next word), letters whose argument is only the rest of
// their group (optional), and long names, true for those that take the next word when no '=' gives a
// value; a long name may be abbreviated while it is unambiguous. first ends the options at the first
// operand (gawk), where the others read options anywhere until "--".
type optSpec struct {
	short, optional string
	long            map[string]bool
	first           bool
}

// option is one option read: its letter, or its long name in full ("" when unknown or ambiguous), and its
// argument.
type option struct {
	name  string
	val   word
	after bool // an operand came before it
}

// read splits a command's arguments into its options and its operands.
func (sp optSpec) read(args []word) (opts []option, ops []word) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case t == "--":
			return opts, append(ops, args[i+1:]...)
		case strings.HasPrefix(t, "--"):
			name, val, valued := strings.Cut(t[2:], "=")
			o := option{name: sp.longName(name), val: word{text: val, dynamic: a.dynamic}, after: len(ops) > 0}
			if !valued && sp.long[o.name] && i+1 < len(args) {
				o.val = args[i+1]
				i++
			}
			opts = append(opts, o)
		case strings.HasPrefix(t, "-") && t != "-":
			for j := 1; j < len(t); j++ {
				c := t[j]
				takes, optional := strings.IndexByte(sp.short, c) >= 0, strings.IndexByte(sp.optional, c) >= 0
				if !takes && !optional {
					opts = append(opts, option{name: string(c), after: len(ops) > 0})
					continue
				}
				o := option{name: string(c), val: word{text: t[j+1:], dynamic: a.dynamic}, after: len(ops) > 0}
				if takes && j+1 == len(t) && i+1 < len(args) {
					o.val = args[i+1]
					i++
				}
				opts = append(opts, o)
				break // the rest of the group was the argument
			}
		case sp.first:
			return opts, append(ops, args[i:]...)
		default:
			ops = append(ops, a)
		}
	}
	return opts, ops
}

// longName is the long option name spells whole or abbreviates unambiguously, or "".
func (sp optSpec) longName(name string) string {
	if _, ok := sp.long[name]; ok {
		return name
	}
	found := ""
	for n := range sp.long {
		if name != "" && strings.HasPrefix(n, name) {
			if found != "" {
				return ""
			}
			found = n
		}
	}
	return found
}

// longs makes a table of long options from names, those ending in ':' taking the next word.
func longs(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		name, takes := strings.CutSuffix(n, ":")
		m[name] = takes
	}
	return m
}

// fileOpts are the options of the commands whose operands the Bash guard judges (coreutils 9, gawk 5,
// rsync 3): enough of each to know which words are arguments and to read abbreviations as the command
// does. A command not here is read as taking no argument to any option.
var fileOpts = map[string]optSpec{
	"rm": {long: longs("force", "interactive", "one-file-system", "no-preserve-root", "preserve-root", "recursive", "dir", "verbose", "help", "version")},
	"cp": {short: "St", long: longs("archive", "attributes-only", "backup", "copy-contents", "debug", "dereference", "force",
		"interactive", "link", "no-clobber", "no-dereference", "preserve", "no-preserve:", "parents", "recursive", "reflink",
		"remove-destination", "sparse:", "strip-trailing-slashes", "symbolic-link", "suffix:", "target-directory:",
		"no-target-directory", "update", "verbose", "one-file-system", "context", "keep-directory-symlink", "help", "version")},
	"mv": {short: "St", long: longs("backup", "context", "debug", "exchange", "force", "interactive", "no-clobber", "no-copy",
		"strip-trailing-slashes", "suffix:", "target-directory:", "no-target-directory", "update", "verbose", "help", "version")},
	"ln": {short: "St", long: longs("backup", "directory", "force", "interactive", "logical", "no-dereference",
		"no-target-directory", "physical", "relative", "symbolic", "suffix:", "target-directory:", "verbose", "help", "version")},
	"install": {short: "gmoSt", long: longs("backup", "compare", "debug", "directory", "group:", "mode:", "owner:",
		"preserve-timestamps", "strip", "strip-program:", "suffix:", "target-directory:", "no-target-directory", "verbose",
		"preserve-context", "context", "help", "version")},
	"rsync": {short: "efBTM@", long: longs("backup-dir:", "suffix:", "chmod:", "chown:", "usermap:", "groupmap:", "rsh:",
		"rsync-path:", "exclude:", "exclude-from:", "include:", "include-from:", "files-from:", "filter:", "compare-dest:",
		"copy-dest:", "link-dest:", "partial-dir:", "temp-dir:", "timeout:", "contimeout:", "block-size:", "max-size:",
		"min-size:", "max-delete:", "max-alloc:", "bwlimit:", "modify-window:", "log-file:", "log-file-format:", "out-format:",
		"password-file:", "port:", "sockopts:", "skip-compress:", "compress-choice:", "compress-level:", "checksum-choice:",
		"info:", "debug:", "iconv:", "stop-after:", "stop-at:", "outbuf:", "remote-option:", "write-batch:", "only-write-batch:",
		"read-batch:", "protocol:", "address:", "checksum-seed:", "copy-as:", "archive", "recursive", "verbose", "delete",
		"dry-run", "compress", "progress", "times", "perms", "links", "update", "checksum", "mkpath")},
	"truncate": {short: "sr", long: longs("no-create", "io-blocks", "reference:", "size:", "help", "version")},
	"touch":    {short: "drt", long: longs("date:", "reference:", "time:", "no-create", "no-dereference", "help", "version")},
	"shred":    {short: "ns", long: longs("force", "iterations:", "random-source:", "size:", "remove", "verbose", "exact", "zero", "help", "version")},
	"mkdir":    {short: "m", long: longs("mode:", "parents", "verbose", "context", "help", "version")},
	"sort": {short: "kotST", long: longs("ignore-leading-blanks", "debug", "dictionary-order", "ignore-case", "general-numeric-sort",
		"ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "random-source:", "reverse",
		"sort:", "version-sort", "batch-size:", "check", "compress-program:", "files0-from:", "key:", "merge", "output:",
		"stable", "buffer-size:", "field-separator:", "temporary-directory:", "parallel:", "unique", "zero-terminated", "help", "version")},
	"awk": {short: "FfvWeEil", optional: "doLpD", first: true, long: longs("assign:", "bignum", "characters-as-bytes", "copyright",
		"csv", "debug", "dump-variables", "exec:", "field-separator:", "file:", "gen-pot", "help", "include:", "lint", "lint-old",
		"load:", "no-optimize", "non-decimal-data", "optimize", "persist", "posix", "pretty-print", "profile", "re-interval",
		"sandbox", "source:", "traditional", "use-lc-numeric", "version")},
}

// awkInPlace returns the files gawk edits in place: with -i inplace (--include, -W include=, a path to
// inplace.awk) or a program that says @include "inplace", its operands after the program text (unless
// -f, -e, -E, --file, --source or --exec gave it), else nil. An awk program can also write files of its
// own (print > "f"): that the guard does not read (docs/HOOKS.md).
func awkInPlace(args []word) []word {
	spec := fileOpts["awk"]
	opts, ops := spec.read(args)
	inPlace, program := false, false
	for _, o := range opts {
		name, val := o.name, o.val.text
		if name == "W" { // -W opt[=val] is --opt[=val]
			n, v, _ := strings.Cut(val, "=")
			name, val = spec.longName(n), v
		}
		switch name {
		case "i", "include":
			inPlace = inPlace || strings.TrimSuffix(filepath.Base(val), ".awk") == "inplace"
		case "f", "file", "E", "exec":
			program = true
		case "e", "source":
			program, inPlace = true, inPlace || includesInplace(val)
		}
	}
	if !program && len(ops) > 0 {
		inPlace = inPlace || includesInplace(ops[0].text)
		ops = ops[1:]
	}
	if !inPlace {
		return nil
	}
	return ops
}

// awkInclude is gawk's @include of a file, whose name is its submatch.
var awkInclude = lazyregexp.New(`@include\s+"([^"]*)"`)

// includesInplace reports whether an awk program's text includes gawk's inplace extension.
func includesInplace(program string) bool {
	for _, m := range awkInclude.FindAllStringSubmatch(program, -1) {
		if strings.TrimSuffix(filepath.Base(m[1]), ".awk") == "inplace" {
			return true
		}
	}
	return false
}

// sortOutput returns the file sort writes its result to (-o FILE, -oFILE, -uo FILE, --output=FILE and
// --output's abbreviations), or nil.
func sortOutput(args []word) []word {
	opts, _ := fileOpts["sort"].read(args)
	var out []word
	for _, o := range opts {
		if o.name == "o" || o.name == "output" {
			out = append(out, o.val)
		}
	}
	return out
}
