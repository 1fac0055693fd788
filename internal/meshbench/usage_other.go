//go:build !unix

package meshbench

import "time"

// processCPU returns the CPU time this process used so far; ok is false
// where the platform cannot tell.
func processCPU() (d time.Duration, ok bool) { return 0, false }
