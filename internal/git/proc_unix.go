//go:build unix && !linux

package git

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// procAttr starts git in its own process group, so killGroup ends its helpers with it.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills git and every helper it started (git-remote-http, ssh): its process group.
func killGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
