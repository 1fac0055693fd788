package etcdproc

import "syscall"

// sysProcAttr kills the member when the test process dies, so that a
// crashed test leaves no etcd behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
