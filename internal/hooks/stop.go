package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
)

// LedgerFile is the declared ledger of gates, at the project root.
//
// Format: GATES.md holds gates as rows of a Markdown table whose header names the columns OWNS, CHECK
// and EXPECT (any case, any order, other columns allowed), and optionally STATUS:
//
//	| gate  | OWNS           | CHECK                      | EXPECT    | STATUS |
//	|-------|----------------|----------------------------|-----------|--------|
//	| tests | internal/hooks | go test ./internal/hooks/… | ok, green | open   |
//
// or as checklist lines: "- [ ] OWNS: internal/hooks | CHECK: go test … | EXPECT: ok". OWNS is what the
// gate covers, CHECK how to verify it, EXPECT the result that meets it. A table row is met when its
// STATUS is met, done, pass, passed, ok, yes, ✓ or [x]; without a STATUS column every row is open.
// A checklist line is met when checked ("- [x]"). The Stop hook executes nothing: it reads the ledger.
const LedgerFile = "GATES.md"

var (
	checkRe  = lazyregexp.New(`^\s*[-*]\s*\[( |x|X)\]\s*(.*)$`)
	metWords = map[string]bool{"met": true, "done": true, "pass": true, "passed": true, "ok": true, "yes": true, "✓": true, "✔": true, "[x]": true, "closed": true}
)

// OpenGates reads a ledger and returns its open gates, one line each.
func OpenGates(text string) []string {
	var open []string
	var cols map[string]int
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if m := checkRe.FindStringSubmatch(t); m != nil {
			if m[1] == " " && strings.Contains(strings.ToUpper(m[2]), "CHECK:") {
				open = append(open, strings.TrimSpace(m[2]))
			}
			cols = nil
			continue
		}
		if !strings.HasPrefix(t, "|") {
			cols = nil
			continue
		}
		cells := splitRow(t)
		if cols == nil {
			c := map[string]int{}
			for i, cell := range cells {
				c[strings.ToUpper(cell)] = i
			}
			_, o := c["OWNS"]
			_, k := c["CHECK"]
			_, e := c["EXPECT"]
			if o && k && e {
				cols = c
			}
			continue
		}
		if strings.Trim(t, "|-: ") == "" {
			continue // the separator row
		}
		cell := func(name string) string {
			if i, ok := cols[name]; ok && i < len(cells) {
				return cells[i]
			}
			return ""
		}
		if si, ok := cols["STATUS"]; ok && si < len(cells) && metWords[strings.ToLower(cells[si])] {
			continue
		}
		open = append(open, fmt.Sprintf("OWNS %s — CHECK %s — EXPECT %s", cell("OWNS"), cell("CHECK"), cell("EXPECT")))
	}
	return open
}

func splitRow(row string) []string {
	parts := strings.Split(strings.Trim(row, "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// openGates reads the project's ledger; no ledger means no gates.
func (s *session) openGates() []string {
	data, err := os.ReadFile(filepath.Join(s.project, LedgerFile))
	if err != nil {
		return nil
	}
	return OpenGates(string(data))
}

// stop blocks the end of a turn while the declared ledger has open gates; silent with no ledger, and when
// the agent is already continuing because of a Stop hook (stop_hook_active).
func (s *session) stop() (Result, error) {
	if s.in.StopHookActive {
		return Result{}, nil
	}
	gates := s.openGates()
	if len(gates) == 0 {
		return Result{}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Not done: %s declares %d open gate(s):\n", LedgerFile, len(gates))
	for _, g := range gates {
		b.WriteString("- " + g + "\n")
	}
	b.WriteString("Run each CHECK, confirm its EXPECT, and mark the row met (STATUS met, or [x]) before you stop; or tell the owner which gate cannot be met and why.")
	return block(Trim(b.String(), CapStop)), nil
}

// preCompact freezes the session record (with the open gates) and counts the compaction, so the next
// SessionStart (source compact) or prompt restates the same moment the summary describes. It emits
// nothing: whether its stdout would reach the window after the summary cannot be observed.
func (s *session) preCompact(ctx context.Context) error {
	gates := s.openGates()
	return s.locked(func() error {
		var rec Record
		var mk Marker
		_ = s.load(recordFile, &rec)
		_ = s.load(markerFile, &mk)
		rec.Gates = gates
		rec.Updated = s.now().UTC()
		if err := s.save(frozenFile, rec); err != nil {
			return err
		}
		mk.Compactions++
		return s.save(markerFile, mk)
	})
}
