//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// lockdown holds the child to its limits before it reads a line of connector code (docs/CONNECTORS.md,
// "The sandbox"): data-segment, CPU-time, file-size, core and open-file rlimits always, and Landlock where
// the kernel has it (no file may be opened or made, no TCP port bound or reached, no abstract socket or
// signal outside the child). It returns the Landlock ABI in force, 0 when the kernel has none.
func lockdown(memoryMB int, timeout time.Duration) (int, error) {
	// The data limit sits above the runtime's own footprint; the heap watcher stops the script at
	// memoryMB, and this is the hard stop for anything faster.
	data := uint64(dataBytes()) + 2*uint64(memoryMB)<<20 + 64<<20
	cpu := uint64(timeout/time.Second) + 2
	limits := []struct {
		res int
		cur uint64
	}{
		{unix.RLIMIT_DATA, data},
		{unix.RLIMIT_CPU, cpu},
		{unix.RLIMIT_FSIZE, 0},
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_MEMLOCK, 0},
		{unix.RLIMIT_MSGQUEUE, 0},
	}
	for _, l := range limits {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.cur, Max: l.cur}); err != nil {
			return 0, fmt.Errorf("setrlimit %d: %v", l.res, err)
		}
	}
	abi := 0
	if v, err := llsys.LandlockGetABIVersion(); err == nil && v > 0 {
		// No rules: every handled right is denied. BestEffort drops what this kernel's ABI lacks.
		if err := landlock.V11.BestEffort().Restrict(); err != nil {
			return 0, fmt.Errorf("landlock: %v", err)
		}
		abi = v
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 16, Max: 16}); err != nil {
		return 0, fmt.Errorf("setrlimit nofile: %v", err)
	}
	return abi, nil
}

// dataBytes is the process's data segment now, from /proc/self/statm (read before Landlock closes it).
func dataBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 256 << 20
	}
	f := bytes.Fields(b)
	if len(f) < 6 {
		return 256 << 20
	}
	pages, _ := strconv.ParseInt(string(f[5]), 10, 64)
	return pages * int64(syscall.Getpagesize())
}
