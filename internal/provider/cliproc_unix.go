//go:build unix && !linux

package provider

import (
	"os/exec"
	"syscall"
)

// procGroup starts the CLI in its own process group, so a timeout ends its children too.
func procGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
	}
}
