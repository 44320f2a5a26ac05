package memory

import (
	"encoding/json"
	"testing"
)

// FuzzCheckPlan feeds CheckPlan plans as a brain would send them (JSON): it must refuse or accept,
// never panic, and never accept an outside line as a core fact or a caution.
func FuzzCheckPlan(f *testing.F) {
	m := mustOpen(f, tidySeed())
	day := "/_content/inbox/2026-11-28.md"
	for _, p := range []Plan{
		{Actions: []Action{{Op: ActFile, Day: day, Line: "line2", Text: "Leo lost his goggles.", Note: "entity-leo"}}},
		{Actions: []Action{{Op: ActCore, Day: day, Line: "line8", Text: "x"}}},
		{Actions: []Action{{Op: ActCreate, Note: "entity-bob", Kind: "person", Title: "Bob", Map: "moc-people"}, {Op: ActMerge, Note: "entity-bob", Into: "entity-leo"}}},
	} {
		data, _ := json.Marshal(p)
		f.Add(data)
	}
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
