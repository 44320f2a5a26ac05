//go:build unix && !linux

package git

import "syscall"

// procAttr starts git in its own process group, so killGroup ends its helpers with it. (Only Linux
// kills a child when its parent dies.)
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
