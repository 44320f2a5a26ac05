package vault_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/vault"
)

// someBox is the box these vaults belong to: a folder apart from each vault's own.
var someBox = filepath.Join(os.TempDir(), "box-vault-test-box")

const (
	boxID  = "4f1c8e9b2d7a3c5e0a6b1d9f"
	secret = "sk-ant-api03-Zx9Q2mV7pL4kR8tY1wN6bH3jC5dF0gS-abcd"
)

func openAt(t *testing.T, dir string) *vault.Vault {
	t.Helper()
	v, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPutGetListDelete(t *testing.T) {
	v := openAt(t, filepath.Join(t.TempDir(), "vault"))
	if err := v.Put("brain/anthropic", secret); err != nil {
		t.Fatal(err)
	}
	if err := v.Put("mail/imap", "hunter2"); err != nil {
		t.Fatal(err)
	}
	got, err := v.Get("brain/anthropic")
	if err != nil || got.Reveal() != secret {
		t.Fatalf("Get: %v, %v", got.Last4(), err)
	}
	list, err := v.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []vault.Entry{{Name: "brain/anthropic", Last4: "…abcd"}, {Name: "mail/imap", Last4: "…"}}
	if fmt.Sprint(list) != fmt.Sprint(want) {
		t.Errorf("List %v, want %v (a short secret shows nothing)", list, want)
	}
	if err := v.Put("brain/anthropic", secret+"2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.Get("brain/anthropic"); got.Reveal() != secret+"2" {
		t.Errorf("Put does not replace")
	}
	for range 2 {
		if err := v.Delete("brain/anthropic"); err != nil {
			t.Fatalf("Delete (twice is fine): %v", err)
		}
	}
	if _, err := v.Get("brain/anthropic"); !errs.Is(err, errs.NotFound) {
		t.Errorf("Get after Delete: %v, want NotFound", err)
	}
	// A reopened vault reads what the first sealed.
	if got, err := openAt(t, v.Dir()).Get("mail/imap"); err != nil || got.Reveal() != "hunter2" {
		t.Errorf("reopened: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	v := openAt(t, t.TempDir()+"/v")
	for _, name := range []string{"", "../x", "/abs", "a b", strings.Repeat("a", 129), "-x"} {
		if err := v.Put(name, "x"); !errs.Is(err, errs.Invalid) {
			t.Errorf("Put(%q): %v, want Invalid", name, err)
		}
	}
	if err := v.Put("a", ""); !errs.Is(err, errs.Invalid) {
		t.Errorf("empty secret: %v", err)
	}
	if err := v.Put("a", strings.Repeat("x", 64<<10+1)); !errs.Is(err, errs.Invalid) {
		t.Errorf("huge secret: %v", err)
	}
	for _, id := range []string{"", "../x", "a/b", strings.Repeat("a", 65)} {
		if _, err := vault.Open(vault.Options{BoxID: id, Dir: t.TempDir(), BoxRoot: someBox}); !errs.Is(err, errs.Invalid) {
			t.Errorf("box id %q: %v, want Invalid", id, err)
		}
	}
}

// TestPrivateFiles: the folders are 0700, the files 0600, and nothing on disk holds the secret in clear.
func TestPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openAt(t, dir)
	if err := v.Put("brain/openai", secret); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, _ := os.Stat(p)
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", p, st.Mode().Perm(), want)
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte(secret[10:30])) {
				t.Errorf("%s holds the secret in clear", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLoosePermissions: a key, an entry or a folder other users could read is refused, as ssh does.
func TestLoosePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openAt(t, dir)
	v.Put("brain/openai", secret)
	entry, _ := filepath.Glob(filepath.Join(dir, "secrets", "*.sealed"))
	for _, c := range []struct {
		path string
		mode os.FileMode
		get  bool
	}{
		{filepath.Join(dir, "box.key"), 0o644, false},
		{dir, 0o755, false},
		{filepath.Join(dir, "secrets"), 0o750, false},
		{entry[0], 0o640, true},
	} {
		st, _ := os.Stat(c.path)
		os.Chmod(c.path, c.mode)
		var err error
		if c.get {
			_, err = v.Get("brain/openai")
		} else {
			_, err = vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox})
		}
		if !errs.Is(err, errs.Refused) || !strings.Contains(err.Error(), "open to other users") {
			t.Errorf("%s at %04o: %v, want Refused", c.path, c.mode, err)
		}
		os.Chmod(c.path, st.Mode().Perm())
	}
	if _, err := v.Get("brain/openai"); err != nil {
		t.Errorf("after restoring the modes: %v", err)
	}
}

func TestTamper(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openAt(t, dir)
	v.Put("brain/openai", secret)
	v.Put("brain/fast", "sk-other-0000000000000000wxyz")
	paths := map[string]string{}
	for _, n := range []string{"brain/openai", "brain/fast"} {
		entries, _ := filepath.Glob(filepath.Join(dir, "secrets", "*.sealed"))
		for _, e := range entries {
			var f map[string]any
			data, _ := os.ReadFile(e)
			json.Unmarshal(data, &f)
			if f["name"] == n {
				paths[n] = e
			}
		}
	}
	orig, _ := os.ReadFile(paths["brain/openai"])
	edit := func(change func(f map[string]any)) []byte {
		var f map[string]any
		json.Unmarshal(orig, &f)
		change(f)
		out, _ := json.Marshal(f)
		return out
	}
	flip := func(key string) func(map[string]any) {
		return func(f map[string]any) {
			b := []byte(f[key].(string))
			b[3] ^= 1
			f[key] = string(b)
		}
	}
	for name, data := range map[string][]byte{
		"a flipped byte in the sealed value": edit(flip("sealed")),
		"a changed nonce":                    edit(flip("nonce")),
		"an unknown version":                 edit(func(f map[string]any) { f["v"] = 2 }),
		"garbage":                            []byte("not json at all"),
		"empty":                              {},
		"truncated":                          orig[:len(orig)/2],
	} {
		os.WriteFile(paths["brain/openai"], data, 0o600)
		if _, err := v.Get("brain/openai"); !errs.Is(err, errs.Invalid) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v, want Invalid", name, err)
		}
		list, _ := v.List()
		broken := 0
		for _, e := range list {
			if e.Broken {
				broken++
			} else if e.Name != "brain/fast" {
				t.Errorf("%s: %s listed as sound", name, e.Name)
			}
		}
		if len(list) != 2 || broken != 1 {
			t.Errorf("%s: List %v, want the damaged entry Broken", name, list)
		}
	}
	// Wrong name: the entry of brain/openai, renamed in its JSON and moved to brain/fast's place, does
	// not open as brain/fast: its additional data binds it to its own name.
	os.WriteFile(paths["brain/fast"], edit(func(f map[string]any) { f["name"] = "brain/fast" }), 0o600)
	if _, err := v.Get("brain/fast"); !errs.Is(err, errs.Invalid) {
		t.Errorf("an entry moved to another name: %v, want Invalid", err)
	}
	// Moved without renaming it: the name inside does not match.
	os.WriteFile(paths["brain/fast"], orig, 0o600)
	if _, err := v.Get("brain/fast"); !errs.Is(err, errs.Invalid) {
		t.Errorf("an entry copied under another name: %v, want Invalid", err)
	}
}

// TestWrongBox: the whole vault folder, key included, copied for another box id does not open: each
// entry is bound to its box.
func TestWrongBox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	openAt(t, dir).Put("brain/openai", secret)
	other, err := vault.Open(vault.Options{BoxID: "another0box0id000000000", Dir: dir, BoxRoot: someBox})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get("brain/openai"); !errs.Is(err, errs.Invalid) {
		t.Errorf("another box's entry: %v, want Invalid", err)
	}
}

func TestDamagedKey(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":         {},
		"short":         {1, 0, 1, 2, 3},
		"newer format":  append([]byte{9, 0}, make([]byte, 32)...),
		"unknown guard": append([]byte{1, 7}, make([]byte, 32)...),
		"no wraps":      {1, 1, 0},
		"short wrap":    append([]byte{1, 1, 1}, make([]byte, 40)...),
	} {
		dir := filepath.Join(t.TempDir(), "vault")
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "box.key"), data, 0o600)
		_, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox})
		if !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: %v, want Invalid", name, err)
		}
		if name == "newer format" && !strings.Contains(fmt.Sprint(err), "upgrade box") {
			t.Errorf("newer format: %v, want it to say upgrade", err)
		}
	}
}

func TestInsideTheBoxRefused(t *testing.T) {
	root := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(root, link)
	for _, dir := range []string{filepath.Join(root, ".box", "vault"), root, filepath.Join(link, "_tmp", "v")} {
		_, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: root})
		if !errs.Is(err, errs.Refused) {
			t.Errorf("%s: %v, want Refused", dir, err)
		}
		if _, err := os.Stat(dir); err == nil && dir != root {
			t.Errorf("%s was made", dir)
		}
	}
	if _, err := vault.Open(vault.Options{BoxID: boxID, Dir: root + "-vault", BoxRoot: root}); err != nil {
		t.Errorf("a sibling folder: %v", err)
	}
}

// The vault needs the box's folder; no part of it may resolve into the box: a secrets/ folder or a
// key file linked there would put what the vault holds in the tree.
func TestLinkedIntoTheBoxRefused(t *testing.T) {
	root := t.TempDir()
	if _, err := vault.Open(vault.Options{BoxID: boxID, Dir: t.TempDir()}); !errs.Is(err, errs.Invalid) {
		t.Errorf("a vault opened without the box's folder: %v", err)
	}
	for _, part := range []string{"secrets", "box.key"} {
		dir := filepath.Join(t.TempDir(), "vault")
		os.MkdirAll(dir, 0o700)
		target := filepath.Join(root, "_tmp", part)
		os.MkdirAll(filepath.Dir(target), 0o755)
		if part == "secrets" {
			os.Mkdir(target, 0o700)
		}
		os.Symlink(target, filepath.Join(dir, part))
		_, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: root})
		if !errs.Is(err, errs.Refused) {
			t.Errorf("%s linked into the box: %v", part, err)
		}
		if ents, _ := os.ReadDir(filepath.Join(root, "_tmp")); len(ents) != 1 {
			t.Errorf("%s linked into the box: the box's _tmp holds %d entries", part, len(ents))
		}
		if data, _ := os.ReadFile(target); len(data) > 0 {
			t.Errorf("the key was written into the box")
		}
	}
}

// A vault folder, key or entry that another user owns is refused, as ssh refuses such keys.
func TestOwnedByAnotherUser(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openAt(t, dir)
	v.Put("brain/openai", secret)
	entry, _ := filepath.Glob(filepath.Join(dir, "secrets", "*.sealed"))
	if os.Geteuid() != 0 {
		// Without the right to give a file away, a folder root owns stands for one.
		if _, err := vault.Open(vault.Options{BoxID: boxID, Dir: "/root", BoxRoot: someBox}); !errs.Is(err, errs.Refused) || !strings.Contains(err.Error(), "another user") {
			t.Errorf("a vault folder root owns: %v", err)
		}
		return
	}
	for _, path := range []string{filepath.Join(dir, "box.key"), entry[0], dir} {
		if err := os.Lchown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		w, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox})
		if err == nil {
			_, err = w.Get("brain/openai")
		}
		if !errs.Is(err, errs.Refused) || !strings.Contains(err.Error(), "another user") {
			t.Errorf("%s owned by uid 65534: %v", path, err)
		}
		os.Lchown(path, 0, 0)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data/owner")
	if d, _ := vault.DefaultDir(boxID); d != filepath.Join("/data/owner", "box", boxID) {
		t.Errorf("with XDG_DATA_HOME: %s", d)
	}
	t.Setenv("XDG_DATA_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/owner")
	if d, _ := vault.DefaultDir(boxID); d != filepath.Join("/home/owner", ".local", "share", "box", boxID) {
		t.Errorf("without XDG_DATA_HOME: %s", d)
	}
	if _, err := vault.DefaultDir("../etc"); !errs.Is(err, errs.Invalid) {
		t.Errorf("a box id with a path in it: %v", err)
	}
}

// TestSecretNeverPrints: every way a value is printed, logged or encoded shows the last four only.
func TestSecretNeverPrints(t *testing.T) {
	v := openAt(t, t.TempDir()+"/v")
	v.Put("brain/openai", secret)
	s, _ := v.Get("brain/openai")
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("key", "k", s, "in", struct{ K vault.Secret }{s}, "vault", v)
	js, _ := json.Marshal(map[string]any{"k": s})
	out := []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x %d", s, s, s, s, s, s, s),
		fmt.Sprintf("%+v", struct{ K vault.Secret }{s}), logged.String(), string(js)}
	for _, o := range out {
		if strings.Contains(o, secret[:12]) || strings.Contains(o, secret[20:40]) {
			t.Errorf("printed %q", o)
		}
	}
	key, _ := os.ReadFile(filepath.Join(v.Dir(), "box.key"))
	for _, o := range []string{fmt.Sprintf("%v %+v %#v %s %x", v, v, v, v, v), logged.String()} {
		if strings.Contains(o, string(key[2:])) || strings.Contains(o, fmt.Sprintf("%x", key[2:10])) || strings.Contains(o, fmt.Sprint(key[2:10])[1:20]) {
			t.Errorf("the box key is printed: %q", o)
		}
	}
	// Kept in a field that is not exported, fmt and slog read it without its methods.
	type kept struct{ s vault.Secret }
	logged.Reset()
	slog.New(slog.NewTextHandler(&logged, nil)).Info("key", "in", kept{s})
	for _, o := range []string{fmt.Sprintf("%v %+v %#v", kept{s}, kept{s}, kept{s}), logged.String()} {
		if strings.Contains(o, secret[:12]) || strings.Contains(o, secret[20:40]) {
			t.Errorf("kept in a field that is not exported, printed %q", o)
		}
	}
	if !strings.Contains(out[0], "…abcd") {
		t.Errorf("printed %q, want …abcd", out[0])
	}
}

// TestConcurrentWriters: goroutines and processes open a fresh vault at once (one box key wins for
// all) and write their own names and one shared name; every value reads back.
func TestConcurrentWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	const procs, routines, each = 3, 4, 10
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$")
		cmd.Env = append(os.Environ(), "VAULT_WRITER_DIR="+dir, "VAULT_WRITER_ID=p"+strconv.Itoa(p))
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	var wg sync.WaitGroup
	for g := range routines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := write(dir, "g"+strconv.Itoa(g), each); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer process: %v\n%s", err, outs[i])
		}
	}
	v := openAt(t, dir)
	list, err := v.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != (procs+routines)*each+1 {
		t.Errorf("%d entries, want %d", len(list), (procs+routines)*each+1)
	}
	for _, e := range list {
		s, err := v.Get(e.Name)
		if err != nil || e.Broken {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if e.Name != "shared" && s.Reveal() != "secret-for-"+e.Name+"-0123456789" {
			t.Errorf("%s holds %s", e.Name, s.Last4())
		}
	}
}

func write(dir, id string, n int) error {
	v, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox})
	if err != nil {
		return err
	}
	for i := range n {
		name := fmt.Sprintf("w/%s-%d", id, i)
		if err := v.Put(name, "secret-for-"+name+"-0123456789"); err != nil {
			return err
		}
		if err := v.Put("shared", "shared-by-"+name+"-0123456789"); err != nil {
			return err
		}
	}
	return nil
}

// TestWriterProcess is TestConcurrentWriters' other process; on its own it does nothing.
func TestWriterProcess(t *testing.T) {
	dir := os.Getenv("VAULT_WRITER_DIR")
	if dir == "" {
		t.Skip("only run as TestConcurrentWriters' child process")
	}
	if err := write(dir, os.Getenv("VAULT_WRITER_ID"), 10); err != nil {
		t.Fatal(err)
	}
}

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openAt(t, dir)
	v.Put("brain/openai", secret)
	prf := bytes.Repeat([]byte{7}, 32)
	phrase := []byte("apple banana cherry delta echo foxtrot golf hotel india juliet kilo lima")
	if err := v.Lock(vault.Unlocker{Kind: vault.PasskeyPRF, Secret: prf}, vault.Unlocker{Kind: vault.RecoveryPhrase, Secret: phrase}); err != nil {
		t.Fatal(err)
	}
	if _, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox}); !errs.Is(err, errs.Locked) {
		t.Errorf("locked, no unlocker: %v, want Locked", err)
	}
	wrongPRF := bytes.Repeat([]byte{8}, 32)
	for name, u := range map[string]vault.Unlocker{
		"wrong passkey":             {Kind: vault.PasskeyPRF, Secret: wrongPRF},
		"the phrase as a passkey":   {Kind: vault.PasskeyPRF, Secret: phrase},
		"the passkey as the phrase": {Kind: vault.RecoveryPhrase, Secret: prf},
	} {
		if _, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox, Unlock: &u}); !errs.Is(err, errs.Unauthorized) {
			t.Errorf("%s: %v, want Unauthorized", name, err)
		}
	}
	for name, u := range map[string]vault.Unlocker{
		"passkey": {Kind: vault.PasskeyPRF, Secret: prf},
		"phrase":  {Kind: vault.RecoveryPhrase, Secret: []byte(string(phrase))},
	} {
		w, err := vault.Open(vault.Options{BoxID: boxID, Dir: dir, BoxRoot: someBox, Unlock: &u})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s, err := w.Get("brain/openai"); err != nil || s.Reveal() != secret {
			t.Errorf("%s: Get %v", name, err)
		}
	}
	// The locked key file holds no copy of the bare key: the file is all wraps.
	data, _ := os.ReadFile(filepath.Join(dir, "box.key"))
	if data[0] != 1 || data[1] != 1 || data[2] != 2 || len(data) != 3+2*(1+16+12+32+16) {
		t.Errorf("locked key file: % x", data[:3])
	}
	if err := v.Lock(vault.Unlocker{Kind: vault.PasskeyPRF, Secret: []byte("short")}); !errs.Is(err, errs.Invalid) {
		t.Errorf("short PRF: %v", err)
	}
}
