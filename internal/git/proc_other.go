//go:build !unix

package git

import (
	"os/exec"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
