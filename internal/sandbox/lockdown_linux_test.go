package sandbox

import llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

// landlockABI is the kernel's Landlock ABI version, 0 when it has none: what the tests expect a child
// to be held by.
func landlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}
