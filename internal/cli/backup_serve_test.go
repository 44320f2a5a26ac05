package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// backupStatus is box backup status --json.
type backupStatus struct {
	Backups []struct {
		Name    string `json:"name"`
		Pushed  string `json:"pushed"`
		Behind  int    `json:"behind"`
		Failing bool   `json:"failing"`
		Error   string `json:"error"`
		Stopped bool   `json:"stopped"`
	} `json:"backups"`
}

// Through the real binaries, docs/BACKUP.md's promises across processes: box serve pushes the commits
// other processes make (CLI verbs here), a push it could not make that waits for the owner shows in the
// CLI's box backup status, and once the owner repaired the remote and box backup now pushed, box serve's
// own pushes resume without a restart.
func TestServePushesOtherProcessesCommitsAndResumesAfterBackupNow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real box serve for several seconds")
	}
	tmp, root, bare := boxWithBackup(t)
	remoteMain := func() string {
		out, _ := exec.Command("git", "-C", bare, "rev-parse", "-q", "--verify", "refs/heads/main").Output()
		return strings.TrimSpace(string(out))
	}
	status := func() backupStatus {
		var s backupStatus
		got := runBin(t, tmp, "--box", root, "--json", "backup", "status")
		if err := json.Unmarshal([]byte(got.stdout), &s); err != nil || len(s.Backups) != 1 {
			t.Fatalf("backup status: %v %s %s", err, got.stdout, got.stderr)
		}
		return s
	}
	todo := func(text string) {
		t.Helper()
		if got := runBin(t, tmp, "--box", root, "todo", "add", text); got.code != 0 {
			t.Fatalf("todo add: %s", got.stderr)
		}
	}
	srv := serveBin(t, root, nil, "--tidy-after", "1s", "--backup-after", "1s")

	// A commit of another process is pushed by box serve.
	todo("Call the plumber")
	eventually(t, 30*time.Second, "box serve pushes the CLI's commit", func() bool {
		return remoteMain() != "" && remoteMain() == gitOut(t, root, "rev-parse", "HEAD")
	})
	good := remoteMain()

	// The remote is changed from elsewhere: box serve's next push is refused and waits for the owner,
	// which the CLI's status shows.
	other := filepath.Join(tmp, "other")
	gitOut(t, tmp, "clone", "-q", bare, other)
	if err := os.WriteFile(filepath.Join(other, "elsewhere.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, other, "add", "-A")
	gitOut(t, other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-qm", "elsewhere")
	gitOut(t, other, "push", "-q", "-f", "origin", "HEAD:main")
	todo("Buy stamps")
	eventually(t, 30*time.Second, "box backup status shows the stopped push", func() bool {
		s := status().Backups[0]
		return s.Failing && s.Stopped && strings.Contains(s.Error, "changed from elsewhere")
	})
	// The job runner's warning reaches box serve's log (its stderr), not a discarded logger.
	eventually(t, 30*time.Second, "the failed run in box serve's log", func() bool {
		return strings.Contains(srv.stderr.String(), "jobs: a run failed") && strings.Contains(srv.stderr.String(), "job=backup")
	})

	// The owner repairs the remote and pushes from the CLI; box serve's pushes resume.
	gitOut(t, bare, "update-ref", "refs/heads/main", good)
	if got := runBin(t, tmp, "--box", root, "backup", "now"); got.code != 0 {
		t.Fatalf("backup now: exit %d %s %s", got.code, got.stdout, got.stderr)
	}
	if s := status().Backups[0]; s.Failing || s.Behind != 0 {
		t.Fatalf("after backup now: %+v", s)
	}
	todo("Water the plants")
	eventually(t, 30*time.Second, "box serve pushes again after box backup now", func() bool {
		return remoteMain() == gitOut(t, root, "rev-parse", "HEAD")
	})
}

// A backup whose repository does not exist: the push's sentence says so with git's reason and what to do,
// and it waits for the owner (stopped) instead of being retried forever. Removing it on a box that never
// had a vault makes no vault folder.
func TestBackupToAMissingRepositoryStops(t *testing.T) {
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	root := filepath.Join(tmp, "box")
	if got := runKeyed(t, data, "", "init", root); got.code != 0 {
		t.Fatalf("init: %s", got.stderr)
	}
	missing := filepath.Join(tmp, "nothing-here.git")
	if got := runKeyed(t, data, "", "--box", root, "backup", "add", "usb", missing); got.code != 0 {
		t.Fatalf("backup add: %s", got.stderr)
	}
	got := runKeyed(t, data, "", "--box", root, "backup", "now")
	if got.code != ExitFailure || !strings.Contains(got.stdout+got.stderr, "no repository there") ||
		!strings.Contains(got.stdout+got.stderr, "does not appear to be a git repository") || !strings.Contains(got.stdout+got.stderr, "git init --bare") {
		t.Fatalf("backup now to a missing repository: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
	var s backupStatus
	st := runKeyed(t, data, "", "--box", root, "--json", "backup", "status")
	if err := json.Unmarshal([]byte(st.stdout), &s); err != nil || len(s.Backups) != 1 || !s.Backups[0].Stopped {
		t.Fatalf("status after a missing repository: %v %s", err, st.stdout)
	}
	// The text says it too: the failure and that it waits for the owner.
	if st := runKeyed(t, data, "", "--box", root, "backup", "status"); st.code != 0 || !strings.Contains(st.stdout, "failing: "+s.Backups[0].Error) ||
		!strings.Contains(st.stdout, "stopped until you act") {
		t.Fatalf("status text after a missing repository: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	if got := runKeyed(t, data, "", "--box", root, "backup", "remove", "usb"); got.code != 0 {
		t.Fatalf("backup remove: %s", got.stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "box")); !os.IsNotExist(err) {
		t.Errorf("backup remove made a vault folder: %v", err)
	}
}
