package tabs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

var installed = Pages{"habits": "Habits", "garden": "Garden"}

func ids(s Screen) string {
	var out []string
	for _, t := range s.Tabs {
		out = append(out, t.ID+"="+t.Label)
	}
	return strings.Join(out, " ") + " home=" + s.Home + " menu=" + s.Menu
}

func TestEffective(t *testing.T) {
	for _, c := range []struct{ name, layout, want string }{
		{"the example", `{"items": ["page:habits", "today", "todo", "chat", "settings"], "home": "page:habits", "menu": "hamburger"}`,
			"page:habits=Habits today=Today todo=To-do chat=Chat settings=Settings home=page:habits menu=hamburger"},
		{"settings always stays", `{"items": ["chat", "today"]}`, "chat=Chat today=Today settings=Settings home=chat menu=tabs"},
		{"menu alone keeps every tab", `{"menu": "hamburger"}`,
			"today=Today todo=To-do chat=Chat pages=Pages memory=Memory diary=Diary settings=Settings home=today menu=hamburger"},
		{"renames", `{"items": ["todo", "page:garden", "settings"], "names": {"todo": "Chores", "page:garden": "🌱 Beds"}}`,
			"todo=Chores page:garden=🌱 Beds settings=Settings home=todo menu=tabs"},
		{"home among all tabs", `{"home": "diary"}`,
			"today=Today todo=To-do chat=Chat pages=Pages memory=Memory diary=Diary settings=Settings home=diary menu=tabs"},
	} {
		l, err := Parse([]byte(c.layout), installed)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := ids(Effective(l, installed)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestEffectiveOutlivesPages(t *testing.T) {
	l, err := Parse([]byte(`{"items": ["page:habits", "today"], "home": "page:habits", "names": {"page:habits": "Daily"}}`), installed)
	if err != nil {
		t.Fatal(err)
	}
	// The page was removed after the layout was made: it drops out and home falls back.
	if got := ids(Effective(l, Pages{"garden": "Garden"})); got != "today=Today settings=Settings home=today menu=tabs" {
		t.Errorf("got %s", got)
	}
	if got := ids(Default()); got != "today=Today todo=To-do chat=Chat pages=Pages memory=Memory diary=Diary settings=Settings home=today menu=tabs" {
		t.Errorf("default: %s", got)
	}
}

func TestRefused(t *testing.T) {
	for _, c := range []struct{ name, layout, want string }{
		{"unknown key", `{"items": ["today"], "color": "red"}`, `unknown key "color"`},
		{"unknown nested key", `{"names": {"today": {"x": 1}}}`, "names must be an object"},
		{"repeated key", `{"menu": "tabs", "menu": "hamburger"}`, `gives "menu" twice`},
		{"unknown tab", `{"items": ["today", "photos"]}`, `tab "photos" that does not exist`},
		{"page not installed", `{"items": ["page:bills"]}`, `page "bills" is not installed`},
		{"home not installed", `{"home": "page:bills"}`, `page "bills" is not installed`},
		{"home not shown", `{"items": ["today"], "home": "chat"}`, `home screen "chat" is not one of the tabs shown`},
		{"page home without items", `{"home": "page:habits"}`, `home screen "page:habits" is not one of the tabs shown`},
		{"bad menu", `{"menu": "drawer"}`, `menu is "drawer"`},
		{"rename settings", `{"names": {"settings": "Gear"}}`, "Settings keeps its name"},
		{"rename hidden", `{"items": ["today"], "names": {"chat": "Talk"}}`, `renames "chat", which it does not show`},
		{"long name", `{"names": {"today": "` + strings.Repeat("x", 25) + `"}}`, "1 to 24 characters"},
		{"control in a name", `{"names": {"today": "a\u0007b"}}`, "a character a tab name can't have"},
		{"repeated item", `{"items": ["today", "today"]}`, `lists "today" twice`},
		{"empty items", `{"items": []}`, "items is empty"},
		{"null items", `{"items": null}`, "items is null"},
		{"empty", `{}`, "The layout is empty"},
		{"not an object", `["today"]`, "must be a JSON object"},
		{"trailing", `{"menu": "tabs"} {}`, "something after its closing brace"},
		{"too many", `{"items": [` + strings.Repeat(`"today",`, 16) + `"chat"]}`, "lists 17 tabs"},
		{"wrong type", `{"home": 3}`, "home must be a tab id"},
		{"empty menu", `{"menu": ""}`, "menu is empty"},
		{"empty home", `{"home": ""}`, "home is empty"},
		{"empty names", `{"names": {}}`, "names is empty"},
	} {
		_, err := Parse([]byte(c.layout), installed)
		if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want …%s…", c.name, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"items": ["page:habits", "today", "todo", "chat", "settings"], "home": "page:habits", "menu": "hamburger"}`,
		`{"menu":"hamburger"}`, `{"names":{"todo":"Chores"}}`, `{"items":["today","today"]}`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data, installed)
		if err != nil {
			if !errs.Is(err, errs.Invalid) {
				t.Fatalf("not Invalid: %v", err)
			}
			return
		}
		s := Effective(l, installed)
		seen, home := map[string]bool{}, false
		for _, tb := range s.Tabs {
			if seen[tb.ID] || tb.Label == "" {
				t.Fatalf("bad tabs %+v", s)
			}
			seen[tb.ID] = true
			home = home || tb.ID == s.Home
			if b, ok := builtinByLabel(fold(tb.Label)); ok && b != tb.ID {
				t.Fatalf("%s shows as the built-in %s: %+v", tb.ID, b, s)
			}
		}
		if !seen[Settings] || !home || (s.Menu != MenuTabs && s.Menu != MenuHamburger) {
			t.Fatalf("bad screen %+v", s)
		}
		if l.Home != "" && s.Home != l.Home {
			t.Fatalf("home %q became %q", l.Home, s.Home)
		}
		again, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		l2, err := Parse(again, installed)
		if err != nil || fmt.Sprint(l2) != fmt.Sprint(l) {
			t.Fatalf("round trip: %v %+v != %+v", err, l2, l)
		}
	})
}

// A tab may not read as a built-in tab it is not, nor as another tab shown: a page called Settings
// beside the real one would take the owner elsewhere when they go to turn off what was built.
func TestLabelsReadApart(t *testing.T) {
	pages := Pages{"fake": "Fake", "garden": "Garden", "settings": "Settings", "twin": "Garden"}
	for _, c := range []struct{ name, layout, want string }{
		{"a page renamed Settings", `{"items": ["page:fake", "today", "settings"], "home": "page:fake", "names": {"page:fake": "Settings"}}`, "reads as the built-in settings tab"},
		{"another case", `{"items": ["page:fake", "settings"], "names": {"page:fake": "SETTINGS"}}`, "reads as the built-in settings tab"},
		{"a sign added", `{"items": ["page:fake", "settings"], "names": {"page:fake": "Settings ⚙"}}`, "reads as the built-in settings tab"},
		{"a built-in renamed Settings", `{"names": {"today": "settings"}}`, "reads as the built-in settings tab"},
		{"a built-in renamed as another", `{"items": ["todo", "settings"], "names": {"todo": "Today"}}`, "reads as the built-in today tab"},
		{"a page named Settings", `{"items": ["page:settings", "today"]}`, "reads as the built-in settings tab"},
		{"two tabs alike", `{"items": ["page:garden", "page:fake", "settings"], "names": {"page:fake": "garden"}}`, `would both show as "garden"`},
		{"two pages alike", `{"items": ["page:garden", "page:twin"]}`, `would both show as "Garden"`},
	} {
		_, err := Parse([]byte(c.layout), pages)
		if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want …%s…", c.name, err, c.want)
		}
	}
	if _, err := Parse([]byte(`{"items": ["page:fake", "today", "settings"], "names": {"page:fake": "Setup", "today": "TODAY"}}`), pages); err != nil {
		t.Errorf("names that read apart (and a tab keeping its own name): %v", err)
	}
	// A layout checked earlier, shown after the pages changed, never shows a second Settings.
	l := Layout{Items: []string{"page:fake", "page:settings", "today"}, Names: map[string]string{"page:fake": "Settings"}}
	if got := ids(Effective(l, pages)); got != "page:fake=Fake page:settings=Settings (page) today=Today settings=Settings home=page:fake menu=tabs" {
		t.Errorf("effective: %s", got)
	}
}
