package git

import "syscall"

// procAttr kills a git child when the box process dies, so a killed writer never leaves a git
// command finishing a commit behind the back of the next writer's crash repair, and starts it in its
// own process group, so killGroup ends its helpers with it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
