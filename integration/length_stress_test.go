//go:build stress

package integration

import "time"

// The full run of make stress: many seeds, half of the fault types in every
// history (each type in every other history), longer histories.
const (
	stressBuild      = true
	linearHistories  = 100
	faultsPerHistory = 4
	opsPerClient     = 60
	// A history of the full run can take porcupine minutes under -race (one
	// in 100 went past 2 minutes, at 86,669 steps).
	linearCheckTimeout = 10 * time.Minute
)
