//go:build unix

package git

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killGroup kills git and every helper it started (git-remote-http, ssh): its process group, which
// procAttr made its own.
func killGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
