package git

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkHardening measures what immunity to the repository's configuration adds to each git call
// (docs/SECURITY.md, "Git"): the cached configuration check alone, and one cheap command (rev-parse)
// and one that reads the whole work tree (status) run as before the hardening (the fixed -c list and
// environment only) and as now (the check, the overrides, the pinned work tree).
func BenchmarkHardening(b *testing.B) {
	ctx := context.Background()
	r := Open(b.TempDir())
	if err := r.Init(ctx); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		os.WriteFile(r.Dir+"/f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md", []byte("a note\n"), 0o644)
	}
	if _, err := r.Run(ctx, nil, "add", "-A"); err != nil {
		b.Fatal(err)
	}
	if _, err := r.Commit(ctx, "seed", nil); err != nil {
		b.Fatal(err)
	}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := r.checkConfig(ctx, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, args := range [][]string{{"rev-parse", "HEAD"}, {"status", "--porcelain", "-z", "--untracked-files=all"}} {
		b.Run(args[0]+"/before", func(b *testing.B) {
			for b.Loop() {
				if _, err := unhardened(ctx, r, args...); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(args[0]+"/hardened", func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Run(ctx, nil, args...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// unhardened is Run as it was before the repository's configuration was checked and overridden.
func unhardened(ctx context.Context, r *Repo, args ...string) ([]byte, error) {
	full := []string{"-C", r.Dir}
	for _, c := range fixedConfig {
		full = append(full, "-c", c)
	}
	cmd := exec.CommandContext(ctx, r.bin(), append(full, args...)...)
	cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=Box", "GIT_AUTHOR_EMAIL=box@localhost", "GIT_COMMITTER_NAME=Box", "GIT_COMMITTER_EMAIL=box@localhost",
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=true", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "LANGUAGE=C"}
	return cmd.Output()
}
