//go:build !linux

package sandbox

// landlockABI is 0: only Linux has Landlock.
func landlockABI() int { return 0 }
