package vault_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/providertest"
	"github.com/boxmem/box/internal/usage"
	"github.com/boxmem/box/internal/vault"
)

// TestPlantedKeyLeaksNowhere runs a whole set-and-use cycle of a provider key the way the brain will:
// the key is sealed in the vault, read back, checked and used against a stand-in provider; a refused
// call's sentence and the usage line go through the box's write transaction into the diary, the
// ledger and git; the vault, the provider config and the key's status are logged. Then the whole box
// tree, every git object (uncompressed), the log, the vault folder and the sentences are searched for
// the key, in clear and in base64.
func TestPlantedKeyLeaksNowhere(t *testing.T) {
	ctx := context.Background()
	planted := "sk-proj-PLANTED7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d-9q8w"
	b, err := box.Init(ctx, t.TempDir(), box.InitOptions{HookBinary: "true"})
	if err != nil {
		t.Fatal(err)
	}
	marker, err := box.ReadMarker(b.Root)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	v, err := vault.Open(vault.Options{BoxID: marker.ID, BoxRoot: b.Root})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(b.Root, ".box", "logs"), 0o700)
	logFile, _ := os.Create(filepath.Join(b.Root, ".box", "logs", "box.log"))
	defer logFile.Close()
	log := slog.New(slog.NewJSONHandler(logFile, nil))

	// Set: checked against the provider before it is saved, then sealed.
	good := providertest.OpenAI(t, planted, providertest.Reply{Text: []string{"Leo swims on Thursdays."}, InputTokens: 40, OutputTokens: 6})
	cfg := provider.Config{Kind: provider.OpenAI, BaseURL: good.URL, Key: planted}
	p, err := provider.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckKey(ctx); err != nil {
		t.Fatal(err)
	}
	if err := v.Put("brain/openai", planted); err != nil {
		t.Fatal(err)
	}
	log.Info("brain set", "config", cfg, "vault", v)

	// Use: read back, stream a reply, record its usage and the status line.
	s, err := v.Get("brain/openai")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("brain key", "key", s)
	cfg.Key = s.Reveal()
	p, _ = provider.New(cfg)
	reply, err := p.Stream(ctx, provider.Request{Model: "model-a", Messages: []provider.Message{{Role: provider.User, Text: "When does Leo swim?"}}}, func(provider.Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 5, 14, 2, 0, 0, time.UTC)
	line, err := usage.NewLine(now, "turn-1", "chat", "openai", reply.Model, reply.Usage, nil).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	list, _ := v.List()
	status := fmt.Sprintf("your own OpenAI key (%s)", list[0].Last4)

	// A refused call: a provider that knows another key echoes ours masked; its sentence is written.
	refusing := providertest.OpenAI(t, "sk-proj-another-key-0000000000000000000000")
	cfg.BaseURL = refusing.URL
	p, _ = provider.New(cfg)
	_, callErr := p.Stream(ctx, provider.Request{Model: "model-a"}, func(provider.Delta) {})
	if provider.FailureOf(callErr) == nil {
		t.Fatalf("want a refusal, got %v", callErr)
	}
	log.Error("brain call failed", "err", callErr, "detail", provider.FailureOf(callErr).Detail)

	owner := box.Actor{Who: "owner", Via: "web"}
	for _, c := range []box.Change{
		{Actor: owner, Op: "brain", Summary: "Brain set: " + status + ".", Apply: func(tx *box.Tx) error {
			return tx.Write(usage.Path(now), line)
		}},
		{Actor: box.Actor{Who: "chat", Via: "web"}, Op: "brain", Summary: callErr.Error(), Apply: func(tx *box.Tx) error {
			return tx.Write("/_content/inbox/2026-03-05-chat.md", []byte("# Chat\n\n"+reply.Text+"\n\n"+callErr.Error()+"\n"))
		}},
	} {
		if _, err := b.Do(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	// Search.
	needles := [][]byte{[]byte(planted), []byte(planted[8:40]), []byte(planted[len(planted)-24:]),
		[]byte(base64.StdEncoding.EncodeToString([]byte(planted))[:40])}
	check := func(where string, data []byte) {
		for _, n := range needles {
			if bytes.Contains(data, n) {
				t.Errorf("the key is in %s", where)
				return
			}
		}
	}
	for _, root := range []string{b.Root, v.Dir()} {
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(path)
				check(path, data)
			}
			return nil
		})
	}
	objects, err := exec.Command("git", "-C", b.Root, "cat-file", "--batch-all-objects", "--batch").Output()
	if err != nil || len(objects) < 1000 {
		t.Fatalf("git objects: %d bytes, %v", len(objects), err)
	}
	check("a git object", objects)
	check("the refusal", []byte(callErr.Error()+fmt.Sprintf(" %+v %#v", callErr, provider.FailureOf(callErr))))
	check("printed values", []byte(fmt.Sprintf("%v %+v %#v %v %+v", cfg, cfg, v, s, v)))
	diary, _ := exec.Command("git", "-C", b.Root, "log", "-p", "--all").Output()
	if !bytes.Contains(diary, []byte(status)) || !bytes.Contains(diary, []byte("refused the key")) {
		t.Errorf("the cycle did not reach git: the test is not looking at what it wrote")
	}
	logged, _ := os.ReadFile(logFile.Name())
	if !bytes.Contains(logged, []byte("…9q8w")) {
		t.Errorf("the log does not show the key's last four: %s", logged)
	}
}
