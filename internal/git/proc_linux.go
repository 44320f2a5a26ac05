package git

import "syscall"

// procAttr kills a git child when the box process dies, so a killed writer never leaves a git
// command finishing a commit behind the back of the next writer's crash repair.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
