package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/backup"
	"github.com/boxmem/box/internal/git"
)

// box backup status's text shows what --json shows of a failure: its sentence, and when it is tried
// again (or that it waits for the owner).
func TestBackupStatusTextShowsAFailure(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 0, 30, 0, time.Local)
	ok := backupStatusLines(backup.Status{Remote: git.Remote{Name: "usb", URL: "/b.git", Pushed: "abc"}})
	if strings.Contains(ok, "failing") || !strings.Contains(ok, "up to date") {
		t.Errorf("a healthy backup:\n%s", ok)
	}
	retry := backupStatusLines(backup.Status{Remote: git.Remote{Name: "gh", URL: "https://example.com/b.git", Behind: 2, Pushed: "abc"},
		Failing: true, Error: "The push to gh failed: Service Unavailable", NextRetry: at})
	if !strings.Contains(retry, "2 commits behind") || !strings.Contains(retry, "failing: The push to gh failed: Service Unavailable") ||
		!strings.Contains(retry, "retry at 2 Mar 10:00:30") {
		t.Errorf("a backup backing off:\n%s", retry)
	}
}
