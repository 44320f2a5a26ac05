package git

import (
	"context"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

func TestRefusedKeys(t *testing.T) {
	for key, want := range map[string][2]bool{ // local, transport
		"filter.evil.clean": {true, true}, "filter.Evil.smudge": {true, true}, "filter.x.process": {true, true},
		"filter.x.required": {false, false}, "diff.external": {true, true}, "diff.x.textconv": {true, true},
		"diff.x.command": {true, true}, "diff.x.xfuncname": {false, false}, "merge.x.driver": {true, true},
		"merge.renormalize": {false, false}, "include.path": {true, true}, "includeif.gitdir:/x/.path": {true, true},
		"core.alternaterefscommand": {true, true}, "core.fsmonitor": {false, false}, "core.sshcommand": {false, false},
		"extensions.partialclone": {true, true}, "remote.x.promisor": {true, true}, "remote.x.url": {false, false},
		"trailer.sign.command": {true, true}, "hook.x.command": {true, true}, "credential.helper": {false, false},
		"url.ext::sh.insteadof": {false, true}, "url.x.pushinsteadof": {false, true}, "http.proxy": {false, true},
		"http.https://h/.extraheader": {false, true}, "core.bare": {false, false},
	} {
		if got := [2]bool{refusedKey(key, false), refusedKey(key, true)}; got != want {
			t.Errorf("refusedKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// The scan is cached against the configuration's bytes: a key planted after a cached call is caught on
// the next one, and the refusal names it and how to remove it.
func TestCheckSeesAChangeAfterACachedCall(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	if _, err := r.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, nil, "config", "merge.evil.driver", "touch /tmp/never"); err != nil {
		t.Fatal(err)
	}
	_, err := r.Status(ctx)
	if errs.KindOf(err) != errs.Refused || !strings.Contains(err.Error(), "git config --unset-all merge.evil.driver") {
		t.Fatalf("after planting a merge driver: %v", err)
	}
	if strings.Contains(err.Error(), r.Dir) {
		t.Errorf("the refusal names the box's host path, which may reach a remote assistant: %v", err)
	}
}
