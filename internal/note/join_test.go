package note

import (
	"strings"
	"testing"
)

func TestJoinEdits(t *testing.T) {
	base := string(NewNote("person", "Leo", nil, []string{"moc-people"}))
	data, err := AddEvent([]byte(base), Event{Date: "2026-11-02", Text: "Joined the swim team.", ID: "team0001"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Event{
		{Date: "2026-10-01", Text: "Started year 4."},
		{Date: "2026-12-01", Text: "Swam on Thursdays.", Replaced: true, ID: "oldswim1"},
		{Date: "2026-11-02", Text: "Joined the swim team.", ID: "team0001"}, // there already (same id)
		{Date: "2026-10-01", Text: "Started year 4."},                       // there already (same date and text)
	} {
		if data, err = AddEvent(data, e); err != nil {
			t.Fatal(err)
		}
	}
	n, err := ParseNote(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range n.Timeline {
		got = append(got, e.line())
	}
	want := []string{"- 2026-10-01 — Started year 4.", "- 2026-11-02 — Joined the swim team. ^team0001", "- 2026-12-01 — Swam on Thursdays. (replaced) ^oldswim1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s", strings.Join(got, "\n"))
	}
	if _, err := AddEvent(data, Event{Date: "Nov 2", Text: "x"}); err == nil {
		t.Error("an undated event was added")
	}
	if _, err := AddEvent(data, Event{Date: "2026-11-02", Text: "two\nlines"}); err == nil {
		t.Error("a two-line event was added")
	}

	for _, th := range []string{"New goggles.", "Book the dentist.", "New goggles."} {
		if data, err = AddThread(data, th); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := ParseNote(data); strings.Join(n.Threads, "|") != "New goggles.|Book the dentist." {
		t.Errorf("threads %q", n.Threads)
	}

	data, _ = AddLink(data, "entity-ana")
	data, _ = AddLink(data, "entity-leo-park")
	with := strings.Replace(string(data), "- [[entity-ana]]", "- [[entity-ana|Ana]]\n- Ana's note is [[entity-ana]], see above", 1)
	out, ok := RemoveLink([]byte(with), "entity-ana")
	if !ok || strings.Contains(string(out), "- [[entity-ana|Ana]]") || !strings.Contains(string(out), "- Ana's note is [[entity-ana]], see above") || !strings.Contains(string(out), "- [[entity-leo-park]]") {
		t.Errorf("RemoveLink:\n%s", out)
	}
	if same, ok := RemoveLink(data, "entity-bob"); ok || string(same) != string(data) {
		t.Error("RemoveLink of a target not linked changed the note")
	}
}
