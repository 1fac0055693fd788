//go:build stress

package integration

// The full run of make stress: many seeds, half of the fault types in every
// history (each type in every other history), longer histories.
const (
	stressBuild      = true
	linearHistories  = 100
	faultsPerHistory = 4
	opsPerClient     = 60
)
