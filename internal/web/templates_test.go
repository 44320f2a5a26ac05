package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/imports"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/routine"
	"github.com/boxmem/box/internal/todo"
)

// samples are every template's typed data, filled so that every branch and range of the template runs:
// a template that names a field its data does not have fails here, not in front of the owner.
func samples() map[string]page {
	at := time.Date(2028, 2, 29, 23, 59, 59, 0, time.Local)
	signed := frame{CSRF: "token", SignedIn: true, Frozen: true, Waiting: 2}
	card := gate.ApprovalCard{ID: "c1", Kind: "delete", Title: "Delete for good: forget", Summary: "forget 2 lines", Reason: "Claude sent this.",
		ProposedBy: gate.Proposer{Who: "Claude", Host: "claude.ai"}, Action: gate.Action{Payload: map[string]any{"lines": []any{map[string]any{"text": "Leo swims."}}}}}
	entry := diary.Entry{ID: "e1", Time: at.UTC().Format(time.RFC3339), Actor: "owner", Via: "web", Op: "remember", Summary: "owner remembered: x", Reason: "why",
		Undo: []diary.FileUndo{{Path: "/_content/inbox/2028-02-29.md"}}}
	conn := keys.Connection{ID: "k_1", Name: "Claude Code", Caps: keys.Caps{Memory: true}, Created: at, Expires: at.AddDate(0, 6, 0), LastUsed: at, LastHost: "127.0.0.1"}
	return map[string]page{
		"today": &todayData{frame: signed, Date: "Tuesday 29 February", Cards: []cardView{viewCard(card)},
			Done: entryViews([]diary.Entry{entry}, nil), Inbox: 3, Last: &entry,
			Reports: []routine.Report{{Routine: "morning-paper", Ran: at, Text: "Nothing waits.", Model: "model-a", Failed: "The provider was down."}}},
		"todo": &todoData{frame: signed, Lists: []todo.List{{Name: "todo", Title: "To-do", Items: []todo.Item{{ID: "t-1", Text: "Buy milk"}, {ID: "t-2", Text: "Call Ana", Done: true}}}}},
		"memory": &memoryData{frame: signed, Q: "leo", Hits: []memory.Hit{{Path: "/_content/memory/notes/entity-leo.md", Name: "entity-leo", Kind: "note", Title: "Leo", Snippet: "**Leo** swims"}},
			Router: "# Memory", Notes: []memory.NoteHook{{Name: "entity-leo", Kind: "entity", Hook: "Son"}}, InboxCount: 1, Maps: []string{"moc-people"},
			Inbox: []memory.InboxDay{{Label: "2028-02-29 (part 2)", Lines: []inbox.Line{{ID: "a1", Who: "owner", Trust: "own", Text: "Leo swims."}}}}},
		"note":  &noteData{frame: signed, Note: memory.Note{Name: "entity-leo", Path: "/_content/memory/notes/entity-leo.md", Title: "Leo", Text: "# Leo", Outside: true}, Editable: true},
		"edit":  &editData{frame: signed, Editable: memory.Editable{Name: "entity-leo", Path: "/_content/memory/notes/entity-leo.md", Text: "# Leo", Base: "abc"}},
		"diary": &diaryData{frame: signed, Entries: entryViews([]diary.Entry{entry}, map[string]bool{"e1": true}), Who: "owner", What: "remember", Whos: []string{"owner"}, Ops: []string{"remember"}, Since: "2028-02-28T23:59"},
		"chat":  &chatData{frame: signed, Q: "where does Leo swim?", A: "From your memory: …"},
		"settings": &settingsData{frame: signed, Switches: []switchView{{Name: gate.Change, Current: gate.JustDoIt}}, Connections: []keys.Connection{conn}, Ended: []keys.Connection{conn}, OAuth: []grants.Grant{{ID: "g1", Client: "Claude", Host: "claude.ai", Created: at, BuildUntil: at}}, Passkeys: []Passkey{{ID: "p1", Name: "My phone", Created: at}}, Address: "http://localhost:7317/mcp", Phrase: ErasePhrase, Backups: []string{"usb", "github"},
			Routines: routinesData{Shown: true, Problem: "x", Days: []string{"mon"}, Starters: []routine.Routine{routine.MorningPaper},
				List: []routine.Routine{{Name: "evening", At: "21:00", Prompt: "p", On: true}, {Name: "quiet", At: "06:00", Prompt: "q"}, {Name: "broken", Problem: "bad"}}}},
		"imports": &importsData{frame: signed, Kinds: importKinds, Limit: "512 MiB", Max: 512 << 20, Entry: "e1", Exports: []string{"markdown", "server-memory", "json"},
			Upload: &uploadView{ID: "u1", Name: "memory.jsonl", Kind: "server-memory", MoreRefused: 1, Result: memory.ImportResult{Lines: 2, Refused: 2, Places: []string{"memory.jsonl line 3: secret"},
				Sample: []string{"Leo swims."}, Skipped: []imports.Skip{{Where: "x", Why: "y"}}, Text: "Would import from memory.jsonl: 2 lines."}}},
		"signin": &signinData{HasPasskey: true, Localhost: "http://localhost:7317/signin"},
		"setup":  &setupData{Code: "code", Localhost: "http://localhost:7317/setup", Problem: "This setup link has expired."},
		"consent": &consentData{Req: grants.Request{ID: "r1", ClientName: "Claude"}, Host: "claude.ai", Offered: keys.Caps{Memory: true, Messages: true, Build: true},
			Asked: keys.Caps{Memory: true, Messages: true}, HasPasskey: true, Localhost: "http://localhost:7317/"},
	}
}

func TestEveryTemplateRunsWithItsData(t *testing.T) {
	pages, err := parsePages(func() *time.Location { return time.UTC })
	if err != nil {
		t.Fatal(err)
	}
	data := samples()
	for k, v := range buildSamples() {
		data[k] = v
	}
	for _, name := range pageNames {
		d, ok := data[name]
		if !ok {
			t.Errorf("template %s has no sample data here: add it", name)
			continue
		}
		f := d.base()
		f.Page, f.Tab = name, name
		f.Tabs = sampleTabs()
		var buf bytes.Buffer
		if err := pages[name].ExecuteTemplate(&buf, "base", d); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(buf.String(), "</html>") {
			t.Errorf("%s rendered a partial page", name)
		}
	}
	if len(data) != len(pageNames) {
		t.Errorf("%d samples for %d templates", len(data), len(pageNames))
	}
}

// TestSafeBack: a form's back path is a path of this site only; a browser drops tabs and newlines from a
// URL, so one that holds any control character could lead to another site.
func TestSafeBack(t *testing.T) {
	for p, want := range map[string]string{
		"/memory":              "/memory",
		"/memory/note?name=x":  "/memory/note?name=x",
		"//evil.example":       "",
		"/\t/evil.example":     "",
		"/\n/evil.example":     "",
		"/\\evil.example":      "",
		"/\x00/evil.example":   "",
		"https://evil.example": "",
		"":                     "",
	} {
		if got := safeBack(p); got != want {
			t.Errorf("safeBack(%q) = %q, want %q", p, got, want)
		}
	}
}
