package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// After an import the job runner files the lines: imported lines are ordinary inbox lines, so a
// `box serve` running beside a `box import` (another process's commit, seen by its inbox watch) arms
// its debounced tidy and files them with no one asking (docs/IMPORTS.md, "After an import").
func TestImportedLinesAreFiledByTheRunner(t *testing.T) {
	root := initBox(t)
	var out, errb lockedBuffer
	g := &Global{IO: IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Cwd: root}}
	cmd := g.rootCmd()
	cmd.SetArgs([]string{"--box", root, "serve", "--addr", "127.0.0.1:0", "--tidy-after", "200ms"})
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("box serve did not stop cleanly: %v\n%s", err, errb.String())
			}
		case <-time.After(20 * time.Second):
			t.Errorf("box serve did not stop within 20s")
		}
	}()
	for deadline := time.Now().Add(20 * time.Second); !servingRe.MatchString(out.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("box serve did not start:\n%s%s", out.String(), errb.String())
		}
	}
	sample, _ := filepath.Abs("../imports/testdata/server-memory/memory.jsonl")
	if res := mem(t, root, ExitOK, "import", "server-memory", sample); res["lines"] != 9.0 {
		t.Fatalf("import: %v", res)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		o := mem(t, root, ExitOK, "overview")
		if o["inbox"] == 0.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runner did not file the imported lines in 30s: %v\n%s", o, errb.String())
		}
	}
	if s := mem(t, root, ExitOK, "read", "entity-leo"); !strings.Contains(s["text"].(string), "Swims on Thursdays") {
		t.Fatalf("Leo's note: %v", s)
	}
}
