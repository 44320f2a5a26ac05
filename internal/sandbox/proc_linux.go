//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
)

// noNamespaces is set once starting a child in new user and network namespaces failed: the kernel or
// its policy does not let this user make them, so later children start without.
var noNamespaces atomic.Bool

// start starts the child, in new user, network and IPC namespaces when the machine lets this user make
// them: the child then has no network interface but a down loopback. It reports whether it got them.
func start(make func() *exec.Cmd) (*exec.Cmd, bool, error) {
	if !noNamespaces.Load() {
		cmd := make()
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Pdeathsig:   syscall.SIGKILL,
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		}
		err := cmd.Start()
		if err == nil {
			return cmd, true, nil
		}
		if !isNamespaceRefusal(err) {
			return nil, false, err
		}
		noNamespaces.Store(true)
	}
	cmd := make()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Start()
	return cmd, false, err
}

func isNamespaceRefusal(err error) bool {
	for _, e := range []error{syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EACCES, syscall.EUSERS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// killedBySignal reports whether the child died of SIGKILL, as the kernel ends a process at its CPU rlimit.
func killedBySignal(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

const canRun = true

// maxRSS is the most memory the ended child ever held, as the kernel counted it (bytes; 0 unknown).
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}
