package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/imports"
)

// An attachment of a vault is not a note, but it is still the owner's files coming in: a text
// attachment (a .txt, .json, .canvas) or the readable strings of a binary one holding a secret-like
// line is left out whole, counted and listed by place; the rest come in byte for byte.
func TestImportSecretInAttachments(t *testing.T) {
	m := mustOpen(t, nil)
	vault := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(filepath.Join(vault, "files"), 0o755)
	os.WriteFile(filepath.Join(vault, "note.md"), []byte("# Note\nSee ![[files/config.json]].\n"), 0o644)
	os.WriteFile(filepath.Join(vault, "files", "config.json"), []byte("{\n  \"name\": \"deploy\",\n  \"token\": \"sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\"\n}\n"), 0o644)
	bin := append([]byte{0x89, 'P', 'N', 'G', 0, 0, 0, 1, 2, 3}, []byte("tEXtComment\x00aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\x00")...)
	os.WriteFile(filepath.Join(vault, "files", "shot.png"), bin, 0o644)
	os.WriteFile(filepath.Join(vault, "files", "plain.png"), []byte{0x89, 'P', 'N', 'G', 0, 0, 0, 1, 2, 3, 4, 5}, 0o644)
	os.WriteFile(filepath.Join(vault, "files", "list.txt"), []byte("milk\neggs\n"), 0o644)
	res := importFrom(t, m, imports.Markdown, vault, false)
	if res.Documents != 3 || res.Refused != 2 {
		t.Fatalf("%+v", res)
	}
	places := strings.Join(res.Places, "\n")
	if !strings.Contains(places, "vault/files/config.json line 3") || !strings.Contains(places, "vault/files/shot.png") {
		t.Errorf("places: %s", places)
	}
	all := treeAndHistory(t, m)
	if strings.Contains(all, "AbCdEfGhIjKlMnOp") || strings.Contains(all, "wJalrXUtnFEMI") || strings.Contains(places, "AbCdEf") {
		t.Fatal("a secret in an attachment reached the box or the report")
	}
	if got := read(t, m, "/_content/imports/vault/files/list.txt"); got != "milk\neggs\n" {
		t.Errorf("a clean attachment is kept byte for byte: %q", got)
	}
}

// A secret split over two lines (its label on one, its value on the next) is caught as one: in a
// document both lines are blanked; in a saved memory whose bullet runs over two lines, its lines are
// refused.
func TestImportSecretOverNeighbourLines(t *testing.T) {
	m := mustOpen(t, nil)
	vault := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(vault, 0o755)
	os.WriteFile(filepath.Join(vault, "wifi.md"), []byte("# Home\nThe office wifi password is\nBlue-Falcon-7731-Quartz\nThe router is in the hall.\n"), 0o644)
	res := importFrom(t, m, imports.Markdown, vault, false)
	if res.Documents != 1 || res.Refused != 1 {
		t.Fatalf("%+v", res)
	}
	got := read(t, m, "/_content/imports/vault/wifi.md")
	if strings.Contains(got, "Blue-Falcon") || !strings.Contains(got, "The router is in the hall.") {
		t.Errorf("kept as %q", got)
	}

	dir := t.TempDir()
	mem := `[{"conversations_memory": "**Home**\n- Lives in Lisbon with Mira.\n- The office wifi password is\n  Blue-Falcon-7731-Quartz.\n- Likes long walks.", "project_memories": {}, "account_uuid": "a"}]`
	os.WriteFile(filepath.Join(dir, "memories.json"), []byte(mem), 0o644)
	os.WriteFile(filepath.Join(dir, "conversations.json"), []byte("[]"), 0o644)
	c := importFrom(t, m, imports.Claude, dir, false)
	if c.Lines != 2 || c.Refused != 1 {
		t.Fatalf("%+v", c)
	}
	if strings.Contains(treeAndHistory(t, m), "Blue-Falcon") {
		t.Fatal("the password reached the box")
	}
}

// An import never reads the box itself: a source inside the box (its tree, .git, .box) is refused before
// anything is read.
func TestImportSourceInsideTheBoxIsRefused(t *testing.T) {
	m := mustOpen(t, nil)
	before := gitCount(t, m)
	for _, p := range []string{m.root, filepath.Join(m.root, "_content"), filepath.Join(m.root, ".git"), filepath.Join(m.root, "_content", "memory", "MEMORY.md")} {
		_, err := importTry(m, imports.Markdown, p, false)
		if err == nil || !strings.Contains(err.Error(), "inside the box") {
			t.Errorf("%s: %v", p, err)
		}
	}
	link := filepath.Join(t.TempDir(), "linked")
	os.Symlink(filepath.Join(m.root, "_content"), link)
	if _, err := importTry(m, imports.Markdown, link, false); err == nil || !strings.Contains(err.Error(), "inside the box") {
		t.Errorf("a link to the box: %v", err)
	}
	if gitCount(t, m) != before {
		t.Fatal("a refused import wrote")
	}
}
