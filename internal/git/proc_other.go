//go:build !unix

package git

import (
	"os/exec"
	"syscall"
)

// procAttr has nothing to set where there are no process groups.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup kills git alone: its helpers end when they find their output closed.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
