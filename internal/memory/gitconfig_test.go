package memory

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/validate"
)

// hostileConfig is one way the box's own .git (or its tree) could make git run a program. refused is
// the key the box names when it refuses to run git; "" means the box neutralises it and works on.
type hostileConfig struct {
	name    string
	config  [][2]string       // git config KEY VALUE, in the box's repository; $PWN is the marker program
	files   map[string]string // files to write under the box root (.git/info/attributes, .gitattributes …)
	refused string
}

var hostileConfigs = []hostileConfig{
	{name: "fsmonitor", config: [][2]string{{"core.fsmonitor", "$PWN"}}},
	{name: "filter clean and smudge", config: [][2]string{{"filter.evil.clean", "$PWN"}, {"filter.evil.smudge", "$PWN"}, {"filter.evil.required", "true"}},
		files: map[string]string{".git/info/attributes": "* filter=evil\n"}, refused: "filter.evil.clean"},
	{name: "filter process in the tree's .gitattributes", config: [][2]string{{"filter.evil.process", "$PWN"}},
		files: map[string]string{".gitattributes": "* filter=evil\n", "_content/.gitattributes": "* filter=evil\n"}, refused: "filter.evil.process"},
	{name: "diff external", config: [][2]string{{"diff.external", "$PWN"}}, refused: "diff.external"},
	{name: "diff textconv", config: [][2]string{{"diff.evil.textconv", "$PWN"}}, files: map[string]string{".git/info/attributes": "* diff=evil\n"}, refused: "diff.evil.textconv"},
	{name: "diff command", config: [][2]string{{"diff.evil.command", "$PWN"}}, files: map[string]string{".git/info/attributes": "* diff=evil\n"}, refused: "diff.evil.command"},
	{name: "merge driver", config: [][2]string{{"merge.evil.driver", "$PWN %O %A %B"}}, files: map[string]string{".git/info/attributes": "* merge=evil\n"}, refused: "merge.evil.driver"},
	{name: "include of a hostile file", config: [][2]string{{"include.path", "$HOSTILE"}}, refused: "include.path"},
	{name: "includeIf of a hostile file", config: [][2]string{{"includeIf.gitdir:/.path", "$HOSTILE"}}, refused: "includeif.gitdir:/.path"},
	{name: "attributes file naming a driver", config: [][2]string{{"core.attributesFile", "$ATTRS"}, {"filter.evil.clean", "$PWN"}}, refused: "filter.evil.clean"},
	{name: "ssh, editors, pagers, askpass, credential helpers", config: [][2]string{
		{"core.sshCommand", "$PWN"}, {"core.editor", "$PWN"}, {"sequence.editor", "$PWN"}, {"core.pager", "$PWN"},
		{"pager.status", "$PWN"}, {"pager.log", "$PWN"}, {"core.askPass", "$PWN"}, {"credential.helper", "!$PWN"},
		{"core.gitProxy", "$PWN"}, {"remote.origin.url", "ext::$PWN"}, {"remote.origin.uploadpack", "$PWN"}, {"remote.origin.receivepack", "$PWN"},
		{"alias.status", "!$PWN"}}},
	{name: "hooks in .git/hooks and core.hooksPath", config: [][2]string{{"core.hooksPath", "$HOOKS"}},
		files: map[string]string{".git/hooks/pre-commit": "#!/bin/sh\n$PWN\n", ".git/hooks/post-commit": "#!/bin/sh\n$PWN\n", ".git/hooks/post-checkout": "#!/bin/sh\n$PWN\n"}},
	{name: "signing and verifying", config: [][2]string{{"gpg.program", "$PWN"}, {"gpg.ssh.program", "$PWN"}, {"commit.gpgSign", "true"}, {"log.showSignature", "true"}}},
	{name: "alternate refs command", config: [][2]string{{"core.alternateRefsCommand", "$PWN"}}, refused: "core.alternaterefscommand"},
	{name: "lazy fetch from a promisor remote", config: [][2]string{{"extensions.partialClone", "evil"}, {"remote.evil.promisor", "true"}, {"remote.evil.url", "$HOOKS"}, {"remote.evil.uploadpack", "$PWN"}}, refused: "extensions.partialclone"},
	{name: "trailer command", config: [][2]string{{"trailer.evil.command", "$PWN"}}, refused: "trailer.evil.command"},
	{name: "configured hook", config: [][2]string{{"hook.evil.command", "$PWN"}, {"hook.evil.event", "pre-commit"}}, refused: "hook.evil.command"},
}

// plainGit runs git as a person would, with no system or user configuration, outside the box's code.
func plainGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// Every git command the box runs for remember, status, tidy, undo and validate --staged is immune to
// the repository's configuration: a planted program never runs; the box either works on or refuses with
// a sentence that names the key and the command that removes it. docs/SECURITY.md ("Git").
func TestHostileGitConfigNeverRuns(t *testing.T) {
	for _, hc := range hostileConfigs {
		t.Run(hc.name, func(t *testing.T) {
			m := mustOpen(t, nil)
			ctx := context.Background()
			aside := t.TempDir()
			marker := filepath.Join(aside, "pwned")
			pwn := filepath.Join(aside, "pwn.sh")
			os.WriteFile(pwn, []byte(fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >> %s\ncat\n", marker)), 0o755)
			hooks := filepath.Join(aside, "hooks")
			os.MkdirAll(hooks, 0o755)
			for _, h := range []string{"pre-commit", "post-commit", "commit-msg", "post-checkout", "reference-transaction"} {
				os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\n"+pwn+"\n"), 0o755)
			}
			hostile := filepath.Join(aside, "hostile.config")
			os.WriteFile(hostile, []byte("[core]\n\tfsmonitor = "+pwn+"\n[filter \"evil\"]\n\tclean = "+pwn+"\n"), 0o644)
			attrs := filepath.Join(aside, "attributes")
			os.WriteFile(attrs, []byte("* filter=evil\n"), 0o644)
			expand := strings.NewReplacer("$PWN", pwn, "$HOSTILE", hostile, "$HOOKS", hooks, "$ATTRS", attrs).Replace

			// Something to undo, and a card staged for validate --staged, before the plant.
			first := remember(t, m, own, "Leo has swim practice on Thursdays.")
			os.WriteFile(filepath.Join(m.root, "_content/docs.md"), []byte("# Docs\n\nStaged for validate.\n"), 0o644)
			plainGit(t, m.root, "add", "_content/docs.md")
			for _, kv := range hc.config {
				plainGit(t, m.root, "config", kv[0], expand(kv[1]))
			}
			for p, text := range hc.files {
				h := filepath.Join(m.root, filepath.FromSlash(p))
				os.MkdirAll(filepath.Dir(h), 0o755)
				os.WriteFile(h, []byte(expand(text)), 0o755)
			}

			ops := []struct {
				name string
				run  func() error
			}{
				{"status", func() error { _, err := m.Box().Status(ctx); return err }},
				{"validate --staged", func() error { _, err := validate.New(m.root, validate.Options{}).Staged(ctx); return err }},
				{"remember", func() error {
					_, err := m.Remember(ctx, own, RememberInput{Text: "Ana plays the cello on Sundays."})
					return err
				}},
				{"tidy", func() error { _, err := m.Tidy(ctx, own); return err }},
				{"undo", func() error { _, err := m.Undo(ctx, own, first.Entry); return err }},
			}
			for _, op := range ops {
				err := op.run()
				if data, _ := os.ReadFile(marker); len(data) > 0 {
					t.Fatalf("%s ran the planted program: %s", op.name, data)
				}
				switch {
				case hc.refused == "" && err != nil:
					t.Errorf("%s: %v (the box should neutralise this and work on)", op.name, err)
				case hc.refused != "" && (err == nil || !strings.Contains(err.Error(), hc.refused) || !strings.Contains(err.Error(), "--unset-all")):
					t.Errorf("%s: %v; want a refusal naming %s and how to remove it", op.name, err, hc.refused)
				}
			}
			if hc.refused != "" {
				if day, _ := os.ReadFile(filepath.Join(m.root, "_content/inbox/2026-11-29.md")); strings.Contains(string(day), "cello") {
					t.Error("a refused remember still wrote its line")
				}
			}
		})
	}
}

// core.worktree in the repository cannot point the box's git at another folder.
func TestGitWorkTreeStaysTheBox(t *testing.T) {
	m := mustOpen(t, nil)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "elsewhere.md"), []byte("not the box\n"), 0o644)
	plainGit(t, m.root, "config", "core.worktree", other)
	remember(t, m, own, "Leo has swim practice on Thursdays.")
	st, err := m.Box().Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range st.Uncommitted {
		if strings.Contains(e.Path, "elsewhere") {
			t.Errorf("status lists a file of core.worktree: %+v", e)
		}
	}
}
