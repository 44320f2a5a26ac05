package memory

import (
	"encoding/json"
	"testing"
)

// FuzzCheckPlan feeds CheckPlan plans as a brain would send them (JSON): it must refuse or accept,
// never panic, and never accept an outside line as a core fact or a caution.
func FuzzCheckPlan(f *testing.F) {
	m := mustOpen(f, tidySeed())
	day := "/_content/inbox/2026-11-28.md" // its lines 8 and 9 are outside lines (tidySeed)
	v := diskView{m}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Plan
		if json.Unmarshal(data, &p) != nil {
			return
		}
		if CheckPlan(v, p) != nil {
			return
		}
		for _, a := range p.Actions {
			if (a.Op == ActCore || a.Op == ActCaution) && a.Day == day && (a.Line == "line8" || a.Line == "line9") {
				t.Fatalf("accepted an outside line as %s: %+v", a.Op, a)
			}
		}
	})
}
