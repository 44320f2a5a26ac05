package app_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/memory"
)

// The jobs that change the memory (tidy, merge, cautions) do nothing while the box is frozen: a run the
// scheduler or the owner asks for is refused with Frozen and commits nothing, not even a record; the
// backup push is not held. Once unfrozen, the tidy files the line.
func TestFrozenBoxRunsNoMemoryJob(t *testing.T) {
	ctx := context.Background()
	a, err := app.Init(ctx, t.TempDir(), nil, "true", app.Options{VaultDir: filepath.Join(t.TempDir(), "vault")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	owner := box.Actor{Who: "owner", Via: "cli", Trust: "own"}
	if _, err := a.Memory.Remember(ctx, owner, memory.RememberInput{Text: "Leo plays chess on Thursdays"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Freeze(ctx, owner, true); err != nil {
		t.Fatal(err)
	}
	head, _ := a.Box.Git().Head(ctx)
	for _, j := range a.Jobs.Jobs() {
		switch j.Name {
		case "tidy", "merge", "cautions":
			if _, err := a.Jobs.Run(ctx, j.Name, jobs.WhyTrigger); !errs.Is(err, errs.Frozen) {
				t.Errorf("%s on a frozen box: %v", j.Name, err)
			}
		case "backup":
			if j.Hold != nil {
				t.Error("the backup push is held on a frozen box")
			}
		}
	}
	if now, _ := a.Box.Git().Head(ctx); now != head {
		t.Fatal("a job committed on a frozen box")
	}
	if n, err := a.Memory.Waiting(ctx); err != nil || n != 1 {
		t.Fatalf("the inbox holds %d lines on a frozen box (%v)", n, err)
	}
	if _, err := a.Freeze(ctx, owner, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Jobs.Run(ctx, "tidy", jobs.WhyTrigger); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.Memory.Waiting(ctx); n != 0 {
		t.Fatalf("the tidy left %d lines after the unfreeze", n)
	}
}
