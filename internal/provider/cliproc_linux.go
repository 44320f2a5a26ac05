//go:build linux

package provider

import (
	"os/exec"
	"syscall"
)

// procGroup starts the CLI in its own process group, so a timeout ends its children too (Codex's
// npm launcher runs the real binary as a child), and kills it if the box dies first.
func procGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		// Best effort: the group or the process may have exited already.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}
