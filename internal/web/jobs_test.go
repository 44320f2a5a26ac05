package web_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/memory"
)

// Today shows what the box's jobs did, as one sentence with Undo, and the true inbox line; the Undo takes
// the filing back.
func TestTodayShowsTheJobsWithUndo(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	ctx := context.Background()
	claude := memory.Actor{Who: "Claude", Via: "mcp", Trust: "outside"}
	for _, s := range []string{"Leo swims on Thursdays", "Mia plays the cello", "Leo likes green tea"} {
		if _, err := f.m.Remember(ctx, claude, memory.RememberInput{Text: s}); err != nil {
			t.Fatal(err)
		}
	}
	if _, body := f.get(f.c, "/today"); !strings.Contains(body, "Inbox: 3 lines waiting") {
		t.Fatalf("Today before the job:\n%.2000s", body)
	}
	rec, err := f.a.Jobs.Run(ctx, "tidy", jobs.WhyTrigger)
	if err != nil {
		t.Fatal(err)
	}
	_, body := f.get(f.c, "/today")
	if !strings.Contains(body, "The box filed 3 lines into 2 notes.") || !strings.Contains(body, "Inbox: nothing waiting") {
		t.Fatalf("Today after the job:\n%.3000s", body)
	}
	m := regexp.MustCompile(`name="entry" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil || m[1] != rec.Entry {
		t.Fatalf("no Undo for the job's entry %s:\n%.3000s", rec.Entry, body)
	}
	f.form(f.c, "/undo", url.Values{"csrf": {csrf}, "entry": {m[1]}, "back": {"/today"}})
	if _, body := f.get(f.c, "/today"); !strings.Contains(body, "Inbox: 3 lines waiting") || strings.Contains(body, `name="entry" value="`+rec.Entry) {
		t.Fatalf("Today after Undo:\n%.3000s", body)
	}
}

// The Memory page pins a core fact and adds a caution with its last day, in the owner's own words.
func TestPinCoreFactAndCaution(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	until := f.clock.Now().AddDate(0, 0, 3).Format("2006-01-02")
	f.form(f.c, "/memory/remember", url.Values{"csrf": {csrf}, "text": {"Lives in Lisbon"}, "as": {"core"}})
	f.form(f.c, "/memory/remember", url.Values{"csrf": {csrf}, "text": {"Leo's school is closed for works"}, "as": {"caution"}, "until": {until}})
	res := f.form(f.c, "/memory/remember", url.Values{"csrf": {csrf}, "text": {"No day given"}, "as": {"caution"}})
	if loc, _ := url.QueryUnescape(res.Header.Get("Location")); !strings.Contains(loc, "last day") {
		t.Errorf("a caution with no day: %s", loc)
	}
	data, err := os.ReadFile(filepath.Join(f.b.Root, "_content", "memory", "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	router := string(data)
	if !strings.Contains(router, "- [core] Lives in Lisbon") || !strings.Contains(router, "- Leo's school is closed for works (until "+until+")") || strings.Contains(router, "No day given") {
		t.Fatalf("router:\n%s", router)
	}
}
