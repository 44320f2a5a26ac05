package web_test

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/providertest"
)

// Settings → Routines through the real handlers: add (a bad time comes back as a sentence, nothing
// written), the starter added off, on and off, run now (the report on Today, the diary line), remove.
func TestRoutinesSection(t *testing.T) {
	f := newFx(t)
	csrf := f.signedIn()
	add := url.Values{"csrf": {csrf}, "name": {"evening"}, "at": {"25:00"}, "day": {"mon", "fri"}, "prompt": {"What did I do today?"}, "on": {"1"}}
	res := f.form(f.c, "/settings/routines", add)
	if loc := res.Header.Get("Location"); !strings.Contains(loc, "HH%3AMM") && !strings.Contains(loc, "HH:MM") {
		t.Fatalf("a bad time: %d %s", res.StatusCode, loc)
	}
	if rs, _ := f.a.Routines.List(context.Background()); len(rs) != 0 {
		t.Fatalf("a refused routine was written: %+v", rs)
	}
	add.Set("at", "21:00")
	if res := f.form(f.c, "/settings/routines", add); !strings.Contains(res.Header.Get("Location"), "Added") {
		t.Fatalf("add: %s", res.Header.Get("Location"))
	}
	_, body := f.get(f.c, "/settings")
	if !strings.Contains(body, `data-routine="evening"`) || !strings.Contains(body, "21:00 on mon, fri · on") || !strings.Contains(body, `data-starter="morning-paper"`) {
		t.Fatalf("settings does not list the routine and the starter:\n%s", section(body, `id="routines"`))
	}
	f.form(f.c, "/settings/routines/starter", url.Values{"csrf": {csrf}, "name": {"morning-paper"}})
	f.form(f.c, "/settings/routines/evening/switch", url.Values{"csrf": {csrf}, "on": {"0"}})
	_, body = f.get(f.c, "/settings")
	if s := section(body, `id="routines"`); !strings.Contains(s, "07:00 every day · off") || !strings.Contains(s, "21:00 on mon, fri · off") || strings.Contains(s, "data-starter") {
		t.Fatalf("after the starter and off:\n%s", s)
	}

	srv := providertest.OpenAI(t, "sk-test-WEB-ROUTINE-77aa")
	if _, err := f.a.Brain.Set(context.Background(), box.Actor{Who: "owner", Via: "web", Trust: "own"},
		brain.SetInput{Provider: "openai", BaseURL: srv.URL, Model: "model-a", Key: "sk-test-WEB-ROUTINE-77aa"}); err != nil {
		t.Fatal(err)
	}
	srv.Push(providertest.Reply{Model: "model-a", Text: []string{"A calm day <b>without</b> plans."}})
	res = f.form(f.c, "/settings/routines/evening/run", url.Values{"csrf": {csrf}})
	if !strings.HasPrefix(res.Header.Get("Location"), "/today") {
		t.Fatalf("run now: %s", res.Header.Get("Location"))
	}
	_, body = f.get(f.c, "/today")
	reports := section(body, `id="routine-reports"`)
	if !strings.Contains(reports, `data-report="evening"`) || !strings.Contains(reports, "A calm day &lt;b&gt;without&lt;/b&gt; plans.") {
		t.Fatalf("Today's reports (escaped):\n%s", reports)
	}
	if !strings.Contains(body, `<span class="who">routine evening</span> reported (model-a, 1 call,`) {
		t.Fatal("the report's diary line is not on Today")
	}
	// A form without the session's token changes nothing.
	if res := f.form(f.c, "/settings/routines/evening/remove", url.Values{"csrf": {"wrong"}}); res.StatusCode != 403 {
		t.Fatalf("remove without the token: %d", res.StatusCode)
	}
	f.form(f.c, "/settings/routines/evening/remove", url.Values{"csrf": {csrf}})
	if rs, _ := f.a.Routines.List(context.Background()); len(rs) != 1 || rs[0].Name != "morning-paper" {
		t.Fatalf("after remove: %+v", rs)
	}
}

// section is the page from the element with attr to the end of its section.
func section(body, attr string) string {
	_, s, ok := strings.Cut(body, attr)
	if !ok {
		return ""
	}
	s, _, _ = strings.Cut(s, "</section>")
	return s
}

// Settings names the backups before the owner erases: the erase pushes its fresh start over them.
func TestEraseNamesTheBackups(t *testing.T) {
	f := newFx(t)
	f.signedIn()
	if _, body := f.get(f.c, "/settings"); strings.Contains(body, `id="erase-backups"`) {
		t.Fatal("a box without backups is warned about them")
	}
	bare := filepath.Join(t.TempDir(), "usb.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := f.a.Backups.Add(context.Background(), "usb", bare, ""); err != nil {
		t.Fatal(err)
	}
	if _, body := f.get(f.c, "/settings"); !strings.Contains(section(body, `id="erase-backups"`), "your backup holds (usb)") {
		t.Fatalf("the erase does not name the backup:\n%s", section(body, `class="danger"`))
	}
	// A detached HEAD: git cannot say the backups, and the page that freezes and erases still shows.
	if out, err := exec.Command("git", "-C", f.a.Root, "checkout", "-q", "--detach").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	code, body := f.get(f.c, "/settings")
	if code != 200 || !strings.Contains(body, `id="freeze"`) || !strings.Contains(section(body, `id="erase-backups"`), "the backups could not be listed") {
		t.Fatalf("settings without the backups' names: %d\n%s", code, body)
	}
}
