//go:build unix

package meshbench

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) this process used so
// far; ok is false where the platform cannot tell.
func processCPU() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
