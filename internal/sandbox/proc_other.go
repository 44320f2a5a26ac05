//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// Connectors run only on Linux: the limits the sandbox relies on (docs/CONNECTORS.md) are Linux's.
const canRun = false

func start(make func() *exec.Cmd) (*exec.Cmd, bool, error) {
	return nil, false, errors.New("connectors run only on Linux")
}

func lockdown(memoryMB int, timeout time.Duration) (int, error) {
	return 0, errors.New("connectors run only on Linux")
}

func killedBySignal(ps *os.ProcessState) bool { return false }

func maxRSS(ps *os.ProcessState) int64 { return 0 }
