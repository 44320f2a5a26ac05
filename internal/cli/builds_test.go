package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/gate"
)

// proposePage sends a page as an assistant would, through the composition root, and returns its card.
func proposePage(t *testing.T, root, slug, html string) string {
	t.Helper()
	a, err := app.Open(context.Background(), root, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p, err := a.Builds.ProposePage(context.Background(), builds.PageInput{Name: "Garden", Own: slug, What: "Plants.", HTML: html},
		gate.Asker{Connection: "Claude", Via: "mcp", Conn: "k_claude"})
	if err != nil {
		t.Fatal(err)
	}
	return p.Card.ID
}

// The owner's builds verbs, each with --json: approve a page's card, list, status, off, on, undo, remove
// (its data then waits on a Delete for good card), safe mode; unknown builds exit 5, a frozen box 7.
func TestBuildsVerbs(t *testing.T) {
	root := initBox(t)
	var list buildsListOutput
	decode(t, mem(t, root, ExitOK, "builds", "list"), &list)
	if len(list.Builds) != 0 || list.SafeMode {
		t.Fatalf("a new box: %+v", list)
	}
	mem(t, root, ExitOK, "cards", "approve", proposePage(t, root, "garden", "<p>one</p>"))
	mem(t, root, ExitOK, "cards", "approve", proposeUpdate(t, root))
	decode(t, mem(t, root, ExitOK, "builds", "list"), &list)
	if len(list.Builds) != 1 || list.Builds[0].ID != "garden" || list.Builds[0].Version != 2 || list.Builds[0].Status != builds.StatusPending {
		t.Fatalf("list: %+v", list)
	}
	var one buildOutput
	decode(t, mem(t, root, ExitOK, "builds", "status", "page:garden"), &one)
	if len(one.Build.Versions) != 2 || one.Build.Versions[0].By.Who != "Claude" || one.Build.Versions[1].Changelog != "Bigger." {
		t.Fatalf("status: %+v", one)
	}
	decode(t, mem(t, root, ExitOK, "builds", "off", "garden"), &one)
	if one.Build.Status != builds.StatusOff {
		t.Fatalf("off: %+v", one)
	}
	decode(t, mem(t, root, ExitOK, "builds", "on", "garden"), &one)
	decode(t, mem(t, root, ExitOK, "builds", "undo", "garden"), &one)
	if one.Build.Version != 1 {
		t.Fatalf("undo: %+v", one)
	}
	mem(t, root, ExitRefused, "builds", "undo", "garden", "1")
	mem(t, root, ExitUsage, "builds", "undo", "garden", "first")
	mem(t, root, ExitNotFound, "builds", "status", "nothing")

	var sm safeModeOutput
	decode(t, mem(t, root, ExitOK, "safe-mode", "on"), &sm)
	decode(t, mem(t, root, ExitOK, "builds", "list"), &list)
	if !sm.SafeMode || !list.SafeMode {
		t.Fatalf("safe mode: %+v %+v", sm, list)
	}
	decode(t, mem(t, root, ExitOK, "safe-mode", "off"), &sm)
	mem(t, root, ExitUsage, "safe-mode", "maybe")

	mem(t, root, ExitOK, "freeze")
	mem(t, root, ExitBusy, "builds", "off", "garden")
	mem(t, root, ExitOK, "unfreeze")

	decode(t, mem(t, root, ExitOK, "builds", "remove", "garden"), &one)
	if one.Card != nil || !strings.Contains(one.Text, "Removed the page Garden") {
		t.Fatalf("remove (a page with no notes): %+v", one)
	}
	mem(t, root, ExitNotFound, "builds", "status", "garden")
	mem(t, root, ExitOK, "undo")
	decode(t, mem(t, root, ExitOK, "builds", "status", "garden"), &one)
}

func proposeUpdate(t *testing.T, root string) string {
	t.Helper()
	a, err := app.Open(context.Background(), root, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p, err := a.Builds.UpdatePage(context.Background(), builds.UpdateInput{Section: "garden", HTML: "<p>two</p>", What: "Bigger."},
		gate.Asker{Connection: "Claude", Via: "mcp", Conn: "k_claude"})
	if err != nil {
		t.Fatal(err)
	}
	return p.Card.ID
}
