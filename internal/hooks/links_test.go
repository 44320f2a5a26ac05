package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writePayload is a PreToolUse payload for the Write tool run in cwd.
func writePayload(t *testing.T, cwd, path string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": "s-link", "cwd": cwd, "hook_event_name": PreToolUse, "tool_name": "Write",
		"tool_input": map[string]any{"file_path": path, "content": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGuardsFollowLinksToTheBox: the write guard and the Bash guard hold when the box is named through a
// symlink (--box LINK, the session in the real folder) and when the session works through one (--box the
// real folder, cwd and paths through the link).
func TestGuardsFollowLinksToTheBox(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(t.TempDir(), "boxlink")
	if err := os.Symlink(f.box, link); err != nil {
		t.Fatal(err)
	}
	viaLinkFlag := f.env
	viaLinkFlag.BoxFlag = link
	for _, c := range []struct {
		name string
		env  Env
		cwd  string // where the session works; paths are spelt under it
	}{
		{"--box through a link, cwd real", viaLinkFlag, f.box},
		{"--box real, cwd through a link", f.env, link},
	} {
		for _, p := range []string{".box/hooks.json", "_config/switches.card", "_config/settings.card"} {
			if denied(Run(context.Background(), PreToolUse, writePayload(t, c.cwd, filepath.Join(c.cwd, p)), c.env)) == "" {
				t.Errorf("%s: a Write to %s went through", c.name, p)
			}
		}
		for _, cmd := range []string{"echo x > .box/hooks.json", "git remote add evil https://x", "git config remote.github.url https://x",
			"cp /tmp/s.card _config/switches.card"} {
			if denied(Run(context.Background(), PreToolUse, bashPayload(t, c.cwd, cmd), c.env)) == "" {
				t.Errorf("%s: %q went through", c.name, cmd)
			}
		}
		if why := denied(Run(context.Background(), PreToolUse, writePayload(t, c.cwd, filepath.Join(c.cwd, "_content/memory/inbox/x.md")), c.env)); why != "" {
			t.Errorf("%s: an inbox write was denied: %s", c.name, why)
		}
	}
	// A project elsewhere that names the box through the link, by path.
	for _, cmd := range []string{"echo x > " + filepath.Join(link, ".box", "hooks.json"), "git -C " + link + " remote add evil https://x"} {
		if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)) == "" {
			t.Errorf("in the project: %q went through", cmd)
		}
	}
}

// TestRulesOfTheBoxStayInTheBox: after a compaction in the box, the rules restated are the box's own
// CLAUDE.md, never a file it links to outside the box.
func TestRulesOfTheBoxStayInTheBox(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	mustWrite(t, outside, "OUTSIDE: the owner's private file\n")
	guide := filepath.Join(f.box, "CLAUDE.md")
	if err := os.Remove(guide); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, guide); err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(map[string]any{"session_id": "rules", "cwd": f.box, "hook_event_name": SessionStart, "source": "compact"})
	got := Run(context.Background(), SessionStart, p, f.env).text()
	if !strings.Contains(got, "Session record after compaction") {
		t.Fatalf("no restatement:\n%s", got)
	}
	if strings.Contains(got, "OUTSIDE") {
		t.Errorf("the rules restated a file outside the box:\n%s", got)
	}
}

// TestGuardsFollowLinksAsTheKernelDoes: in a project with a link into the box's memory, "m/../.." is the
// box's root to the shell (the link is followed before the ".."), a link to a card not written yet leads
// to where a write through it would land, and a link made to a file only the box writes is a write of it.
func TestGuardsFollowLinksAsTheKernelDoes(t *testing.T) {
	f := newFixture(t)
	if err := os.Symlink(filepath.Join(f.box, "_content", "memory"), filepath.Join(f.project, "m")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.box, "_bookkeeping", "approvals", "forged.approval.card"), filepath.Join(f.project, "ap")); err != nil {
		t.Fatal(err)
	}
	// q leads deeper elsewhere: q/../../box is the box only as the text reads, for a tool that cleans it.
	deep := filepath.Join(filepath.Dir(f.project), "other", "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(f.project, "q")); err != nil {
		t.Fatal(err)
	}
	up := f.project + "/m/../.." // as written: filepath.Join would take the ".." from the link's folder
	for _, p := range []string{up + "/.box/hooks.json", up + "/_config/switches.card", up + "/.git/hooks/post-commit", filepath.Join(f.project, "ap"),
		f.project + "/q/../../box/_config/switches.card"} {
		if denied(Run(context.Background(), PreToolUse, writePayload(t, f.project, p), f.env)) == "" {
			t.Errorf("a Write to %s went through", p)
		}
	}
	for _, cmd := range []string{"echo x > m/../../.box/hooks.json", "cp x m/../../.git/hooks/post-commit", "sed -i s/a/b/ m/../../_config/switches.card",
		"cd -P m/.. && echo x > ../_config/switches.card", "cd m && echo x > ../../_config/switches.card", "echo x > q/../../box/.box/hooks.json",
		"cd q && echo x > ../../box/_config/switches.card", "tee ap < /tmp/card", "ln -s " + filepath.Join(f.box, ".git", "hooks", "reference-transaction") + " rt",
		"gsed -i s/a/b/ m/../../_config/switches.card", "busybox sed -i s/a/b/ m/../../_config/switches.card",
		"awk -i inplace '{print}' m/../../_config/switches.card", "sort -o m/../../_config/switches.card x",
		"sort -uo m/../../_config/switches.card x", "sort -ro" + f.box + "/_config/switches.card x", "sort --outp=m/../../_config/switches.card x",
		"sort --o m/../../_config/switches.card x", "sort -t , -o m/../../_config/switches.card x",
		"awk -i inplace --source='{print}' m/../../_config/switches.card", "awk -i inplace --file=p.awk m/../../_config/switches.card",
		"awk -i /usr/share/awk/inplace.awk '{print}' m/../../_config/switches.card", "gawk --incl=inplace -e 1 m/../../_config/switches.card",
		"awk -iinplace -f p.awk m/../../_config/switches.card", "awk -i inplace --so '{print}' m/../../_config/switches.card",
		// a symbolic link's relative target is read from the link's folder, or from the folder it is made in
		"ln -s ../../../_config/switches.card m/notes/sw", "ln -s ../../../_config/switches.card m/notes", "ln -st m/notes ../../../_config/switches.card",
		"cp -s ../../../_config/switches.card m/notes/sw", "cp --symbolic ../../../_config/switches.card m/notes/sw",
		"gawk -W include=inplace 1 m/../../_config/switches.card", "gawk -Winclude=inplace 1 m/../../_config/switches.card",
		"gawk -W incl=inplace 1 m/../../_config/switches.card", "gawk '@include \"inplace\"; 1' m/../../_config/switches.card",
		"gawk -e '@include \"inplace.awk\"' -e 1 m/../../_config/switches.card",
		// into a folder: the file each operand becomes there
		"cp switches.card m/../../_config/", "mv settings.card m/../../_config", "cp -t m/../../_config switches.card",
		"cp --target=m/../../.git/hooks /tmp/pre-commit", "cp --targ m/../../.git/hooks /tmp/pre-commit", "mv --target=m/../../.box x",
		"install --target-directory=m/../../.git/hooks pre-commit", "rsync -t x m/../../.box/hooks.json",
		"install -mgo-t x m/../../.box/hooks.json", "install -gstaff x m/../../.box/hooks.json", "install -ostaff x m/../../_config/switches.card",
		"install -d m/../../.box/x", "ln -s /tmp/evil m/../../.git/hooks",
		// a hard link is the same file
		"cp --l m/../../_config/switches.card x",
		"link m/../../_config/switches.card x", "cp -l m/../../_config/switches.card x", "cp -al m/../../.git/hooks x", "cp --link m/../../_config/switches.card x"} {
		if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)) == "" {
			t.Errorf("%q went through", cmd)
		}
	}
	// The shell's cd is logical: cd m/.. stays in the project, and ../_config is beside it, not the box's.
	for _, cmd := range []string{"echo x > m/notes.md", "cd m/.. && echo x > ../_config/switches.card", "awk '{print}' m/../../_config/switches.card", "sort m/../../_config/switches.card", "ln -s m/x y",
		"cp m/../../_config/switches.card x", "cp -S .x m/../../_config/switches.card x", "ln -s ../x m/notes/y",
		"sort -k1o m/../../_config/switches.card", "sort -t o m/../../_config/switches.card", "sort -- -o m/../../_config/switches.card",
		"awk -v inplace=1 '{print}' m/../../_config/switches.card", "awk -i inplace.sh '{print}' m/../../_config/switches.card",
		"cp m/../../_config/switches.card /tmp/", "install -m 644 x /tmp/y", "rsync -av m/ /tmp/backup/", "awk -- '{print}' m/../../_config/switches.card"} {
		if why := denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)); why != "" {
			t.Errorf("%q was denied: %s", cmd, why)
		}
	}
}

// TestCdIsFollowed: the folder a cd leaves the shell in is known for ~ and a bare cd (the home folder);
// after a cd the hook cannot tell (built at run time, cd -, a lone pushd), a relative path is judged by
// what it spells.
func TestCdIsFollowed(t *testing.T) {
	f := newFixture(t)
	t.Setenv("HOME", filepath.Dir(f.box))
	for _, cmd := range []string{"cd ~/box && echo x > .box/hooks.json", "cd && cd box/_config && echo x > switches.card",
		"cd ~ && echo x > box/.git/hooks/post-commit", "cd $B && echo x > .box/hooks.json", "cd - && echo x > _config/switches.card",
		"pushd && echo x > _config/switches.card", "cd $BOX_DIR && git remote add evil https://example.com/x.git",
		// after a cd the hook cannot follow, the cd and the path are judged together, relative cds included
		"cd $BOX_DIR/.git && echo x > hooks/pre-commit", "cd \"$HOME/box/.git/hooks\" && cp /tmp/evil pre-commit",
		"cd $BOX_DIR/_bookkeeping/approvals && cp /tmp/forged x.approval.card", "cd $BOX_DIR && cd .git/hooks && cp /tmp/evil pre-commit",
		"cd $BOX_DIR && cd .box && echo x > hooks.json", "cd $BOX_DIR && git --git-dir=.git remote add evil https://x",
		"cd $BOX_DIR && GIT_DIR=.git git remote add evil https://x", "cd $BOX_DIR && git config --file .git/config remote.origin.url https://x",
		"cd $BOX_DIR && git config -f .git/config remote.origin.url https://x", "cd ${HOME}/box && echo x > .box/hooks.json",
		"cd ~/box && pushd /tmp && pushd +1 && echo x > .box/hooks.json"} {
		if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)) == "" {
			t.Errorf("%q went through", cmd)
		}
	}
	// In the box: a cd may not take the line elsewhere (in a subshell, a cd that fails, a popd after it).
	for _, cmd := range []string{"(cd /tmp); echo x > .box/hooks.json", "cd /nonexistent; echo x > _config/switches.card",
		"pushd /tmp && popd && echo x > .box/hooks.json", "echo \"$(cd /tmp && pwd)\" > .box/hooks.json", "bash -c 'cd /tmp'; echo x > .box/x",
		"cd /tmp && git config remote.x.url y", "cd /tmp && cp x .git/hooks/pre-commit"} {
		if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.box, cmd), f.env)) == "" {
			t.Errorf("%q went through", cmd)
		}
	}
	for _, cmd := range []string{"cd ~/box && echo x > notes.md", "cd $B && echo x > notes.md", "cd ~/elsewhere && echo x > .box/hooks.json",
		"cd $REPO && git remote add origin https://example.com/x.git", "cd $REPO && echo x > .git/info/exclude",
		"cd \"$(git rev-parse --show-toplevel)\" && cp scripts/pre-commit .git/hooks/pre-commit", "(cd \"$SUB\" && make) && cp x .git/hooks/pre-commit",
		"cd \"$SANDBOX_ROOT/repo\" && git remote add origin https://example.com/x.git", "cd $REPO && touch docs/approvals/x.md",
		"cd $BOX_DIR && git -C /other/repo remote add origin https://example.com/x.git"} {
		if why := denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)); why != "" {
			t.Errorf("%q was denied: %s", cmd, why)
		}
	}
}

// TestCdFromALinkedFolder: a session whose folder the agent names through a link: the shell's logical
// cd .. climbs from the link's folder, not from its target's.
func TestCdFromALinkedFolder(t *testing.T) {
	f := newFixture(t)
	// in/ is a link, in the box's folder's parent, to a project folder two levels down elsewhere
	deep := filepath.Join(filepath.Dir(f.project), "far", "x", "y")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(filepath.Dir(f.box), "in")
	if err := os.Symlink(deep, in); err != nil {
		t.Fatal(err)
	}
	if denied(Run(context.Background(), PreToolUse, bashPayload(t, in, "cd .. && echo x > box/_config/switches.card"), f.env)) == "" {
		t.Error("a logical cd .. from the linked folder, then into the box, went through")
	}
}

// TestGuardReadsTheWholeLine: writes that only the whole line tells apart: cds in any order and past the
// folder cap, patterns, wrappers, git's environment, scripts run later. The session runs in a project; the
// fixture's HOME holds the box as ~/box, and m is a link in the project to the box's memory.
func TestGuardReadsTheWholeLine(t *testing.T) {
	f := newFixture(t)
	t.Setenv("HOME", filepath.Dir(f.box))
	t.Setenv("CDPATH", "")
	if err := os.Symlink(filepath.Join(f.box, "_content", "memory"), filepath.Join(f.project, "m")); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		// five relative cds fill the folders; what comes after is still read
		"cd a; cd b; cd c; cd d; cd e; cd ~/box && echo x > _config/switches.card",
		"cd a; cd b; cd c; cd d; cd e; cd ~/box && git remote add evil https://x",
		"cd $A; cd a; cd b; cd c; cd d; cd e; cd $BOX_DIR/.git && cp evil hooks/pre-commit",
		// a function or a loop runs a command before a cd written after it
		"w(){ echo x > _config/switches.card; }; cd ~/box; w", "for i in 1 2; do cp evil .git/hooks/pre-commit; cd ~/box; done",
		// bash's logical cd takes the physical folder where the logical one does not exist
		"cd m/../../_config && echo x > switches.card",
		// patterns
		"cd ~/bo* && echo x > _config/switches.card", "echo x > ~/box/_config/switch*.card", "cd ~/box && cp evil _config/s*s.card",
		// a cd the hook cannot follow whose fixed part names the box
		"cd ~/box/$X && cp evil .git/hooks/pre-commit", "cd $HOME/box/${SUB:-.} && cp evil .git/hooks/pre-commit",
		"cd ~/box/\"$(echo .)\" && cp evil _bookkeeping/approvals/x.approval.card",
		// git's repository and configuration through the environment or a bare ~
		"export GIT_DIR=~/box/.git; git remote add evil https://x", "GIT_DIR=~/box/.git; git remote add evil https://x",
		"GIT_CONFIG_GLOBAL=~/box/.git/config git config --global remote.origin.url https://x", "git -C ~ -C box remote add evil x",
		// wrappers' options that take an argument, and the folders they run in
		"env -C ~/box cp evil .box/hooks.json", "env -u FOO cp evil ~/box/.box/hooks.json", "sudo -u root cp evil ~/box/.box/hooks.json",
		"timeout -s KILL 10 cp evil ~/box/.box/hooks.json", "flock /tmp/l cp evil ~/box/.box/hooks.json", "exec -a x cp evil ~/box/.box/hooks.json",
		"ls | xargs -I {} cp {} ~/box/.box/", "sudo -D ~/box cp evil _config/switches.card",
		// options after the operands; a cp that stops reading options at its first operand
		"rsync evil ~/box/.box/hooks.json --exclude x", "rsync evil ~/box/.box/hooks.json --chmod u+w", "cp switches.card -t x ~/box/_config/",
		// names a file system that ignores case takes for .git and .box; GNU tools under Homebrew's names
		"cp evil ~/box/.GIT/hooks/pre-commit", "echo x > ~/box/.Box/hooks.json", "gcp evil ~/box/.box/hooks.json", "gmv x ~/box/_config/switches.card",
		"coreutils cp evil ~/box/.box/hooks.json",
		// scripts run later in a shell of their own
		"cd ~/box && trap 'echo x > _config/switches.card' EXIT", "watch -n1 'echo x > ~/box/_config/switches.card'",
		"flock /tmp/l -c 'echo x > ~/box/_config/switches.card'", "nohup watch 'echo x > ~/box/_config/switches.card'",
		"env - cp evil ~/box/.box/hooks.json", "env - bash -c 'echo x > ~/box/_config/switches.card'", "chrt -d -T 5000 -P 10000 0 cp evil ~/box/.box/x",
		// a path built at run time where the line names the box
		"X=~/box; cp forged \"$X/_bookkeeping/approvals/x.approval.card\"", "X=~/box; cp evil \"$X/.git/hooks/pre-commit\"",
		"for d in ~/box; do cp evil \"$d/.git/hooks/pre-commit\"; done", "cp forged \"$(echo ~/box)/_bookkeeping/approvals/x.approval.card\"",
		"cd $BOX_DIR && cp evil \"$(pwd)/.git/hooks/pre-commit\"", "cd ~/proj/m/../../_config && echo x > switches.card",
		"GIT_DIR=$BOX_DIR/.git git remote add evil x", "export GIT_DIR=$BOX_DIR/.git; git remote add evil x", "typeset -x GIT_DIR=~/box/.git; git remote add evil x",
		// CDPATH
		// a folder built from $PWD; a shell whose cds are physical; a runner the guard does not know; find -exec
		"cp /tmp/evil \"$PWD/../box/.git/hooks/pre-commit\"", "touch \"${PWD}/../box/_bookkeeping/approvals/x.approval.card\"",
		"set -P; cd m/../.. && cp x .git/hooks/pre-commit", "set -o physical; cd m/.. && echo x > ../_config/switches.card",
		"bash -P -c 'cd m/../.. && git remote add evil x'", "find . -exec cp -t ~/box/.git/hooks {} +",
		"find . -name x -execdir cp {} ~/box/.box/ ;", "fakeroot cp -t ~/box/.git/hooks x", "direnv exec . cp --target-directory=~/box/.box x",
		"parallel cp -t ~/box/.git/hooks ::: a b", "busybox nohup cp x ~/box/.box/hooks.json",
		"parallel cp {} ~/box/.git/hooks/ ::: evil", "runuser me -c 'cp x ~/box/.box/hooks.json'",
		"unshare --propagation private cp x ~/box/.box/hooks.json", "gawk -dv -i inplace 1 ~/box/_config/switches.card",
		"git -C \"$MYBOX\" remote add evil x", "git --git-dir=\"${MY_BOX}/.git\" remote add evil x", "cd $THE_BOX && cp x .git/hooks/pre-commit",
		"CDPATH=~ cd box && echo x > _config/switches.card", "CDPATH=~/box cd .git && echo x > hooks/pre-commit",
		"CDPATH=.. cd box && echo x > _config/switches.card", "CDPATH=~; cd box && echo x > _config/switches.card",
		"export CDPATH=~; cd box && echo x > _config/switches.card",
	} {
		if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)) == "" {
			t.Errorf("%q went through", cmd)
		}
	}
	// A project's own .git, however its path is built, is the project's.
	for _, cmd := range []string{"cp scripts/pre-commit \"$(git rev-parse --show-toplevel)/.git/hooks/pre-commit\"",
		"echo build >> \"$REPO/.git/info/exclude\"", "cd frontend && npm test && cd ../backend && go test ./... && cd ../docs && echo x > .git/info/exclude",
		"rsync -a --exclude .git src/ /tmp/out/", "env -C /tmp cp x y", "timeout 10 go test ./...", "ls | xargs -I {} cp {} /tmp/out/",
		"watch -n1 'ls .git'", "gcp x /tmp/y", "GIT_CONFIG_GLOBAL=$TMPDIR/.gitconfig git config --global user.name CI",
		"export GIT_CONFIG_GLOBAL=$RUNNER_TEMP/.gitconfig; git config --global user.name CI",
		// six subshells' cds fill the folders; the project's own files after them are the project's
		"(cd frontend && make); (cd backend && make); (cd docs && make); (cd packages/core && make); (cd packages/utils && make); (cd packages/cli && make); git config user.email me@example.com",
		"(cd a && make); (cd b && make); (cd c && make); (cd d && make); (cd e && make); (cd f && make); cp scripts/pre-commit .git/hooks/pre-commit",
		"cd frontend && rm -rf dist/* build/* && cd .. && cd backend && rm -rf dist/* build/* && cd .. && cd docs && rm -rf dist/* build/* && cd .. && cd a && rm -rf dist/* build/* && cd .. && cd b && rm -rf dist/* build/*",
		"git config --file=\"$OLDPWD/.git/config\" remote.x.url y", "cd \"$SANDBOX_ROOT\" && cp x .git/hooks/pre-commit",
		"cp x \"$PWD/.git/hooks/pre-commit\""} {
		if why := denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)); why != "" {
			t.Errorf("%q was denied: %s", cmd, why)
		}
	}
}

// A word of many brace lists is expanded to the limit without walking the branches past it (3^30 of them).
func TestBraceExpansionStopsAtItsLimit(t *testing.T) {
	done := make(chan []string, 1)
	go func() { done <- expandBraces("x"+strings.Repeat("{a,b,c}", 30), 64) }()
	select {
	case got := <-done:
		if len(got) != 64 {
			t.Fatalf("%d words, want 64", len(got))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the expansion did not stop at its limit")
	}
}

// A line that writes more paths from more folders than the guard reads in its time is denied, not let
// through when the hook's time ends.
func TestGuardDeniesWhatItCannotRead(t *testing.T) {
	f := newFixture(t)
	files := strings.Repeat("x/y/z ", 2000)
	for _, cmd := range []string{"cd a; cd b; cd c; cd d; cd e; touch " + files, "touch " + strings.Repeat("/usr/bin/* ", 400),

		manyCds(300) + "true", "touch " + strings.Repeat("a/", 2000) + "x " + strings.Repeat(strings.Repeat("a/", 2000)+"x ", 40)} {
		if why := denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)); !strings.Contains(why, "Split it") {
			t.Errorf("%.60q…: %q", cmd, why)
		}
	}
	// A long CDPATH and many cds are read in time (its folders counted once), and what follows is judged.
	t.Setenv("HOME", filepath.Dir(f.box))
	long := "export CDPATH=" + strings.Repeat("/usr:/tmp:", 3000) + "; " + strings.Repeat("cd a; ", 150) + "cd ~/box && echo x > _config/switches.card"
	if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, long), f.env)) == "" {
		t.Error("a long CDPATH and many cds took the guard past its time")
	}
	if why := denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, "cd a && touch "+strings.Repeat("x/y ", 200)), f.env)); why != "" {
		t.Errorf("an ordinary long line was denied: %s", why)
	}
}

// manyCds is a line of n cds to different folders.
func manyCds(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "cd /tmp/a%d; ", i)
	}
	return b.String()
}

// A pattern is judged in all its matches, not the first few; past maxMatches the line is denied.
func TestPatternsAreReadWhole(t *testing.T) {
	f := newFixture(t)
	for i := range 20 {
		mustWrite(t, filepath.Join(f.box, "_config", fmt.Sprintf("a%02d.card", i)), "x")
	}
	if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, "sed -i s/ask/do/ "+f.box+"/_config/*.card"), f.env)) == "" {
		t.Error("a pattern whose 21st match is the switches went through")
	}
	many := t.TempDir()
	for i := range maxMatches + 1 {
		mustWrite(t, filepath.Join(many, fmt.Sprintf("f%03d", i)), "x")
	}
	if why := denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, "rm "+many+"/*"), f.env)); !strings.Contains(why, "name fewer") {
		t.Errorf("a pattern of %d matches: %q", maxMatches+1, why)
	}
}
