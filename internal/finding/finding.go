// Package finding owns the one shape every checker reports in: a box path, a line, a severity, a code
// and a sentence. It holds no rules itself; layout, schema, ref and validate produce findings.
package finding

import (
	"fmt"
	"sort"
)

// Severity is "error" (blocks a commit, exit 1) or "warning" (reported, never blocks).
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one problem in one file. Path is a box path ("/_content/x.md"); Line is 1-based, 0 when
// the finding is about the whole file.
type Finding struct {
	Path     string   `json:"path"`
	Line     int      `json:"line,omitempty"`
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

func (f Finding) String() string {
	loc := f.Path
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.Path, f.Line)
	}
	return fmt.Sprintf("%s: %s: %s (%s)", loc, f.Severity, f.Message, f.Code)
}

// Errorf and Warnf build findings.
func Errorf(path string, line int, code, format string, a ...any) Finding {
	return Finding{Path: path, Line: line, Severity: Error, Code: code, Message: fmt.Sprintf(format, a...)}
}

func Warnf(path string, line int, code, format string, a ...any) Finding {
	return Finding{Path: path, Line: line, Severity: Warning, Code: code, Message: fmt.Sprintf(format, a...)}
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders findings by path, line, code, then message, so output is the same on every run.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message // findings found concurrently (links checked at once) come in any order
	})
}
