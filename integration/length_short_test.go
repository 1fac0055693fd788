//go:build !stress

package integration

import "time"

// The short run of make test: a few seeds, a couple of faults each.
const (
	stressBuild = false
	// linearHistories is the number of histories of TestLinearizability.
	linearHistories = 4
	// faultsPerHistory is how many faults each history injects.
	faultsPerHistory = 2
	// opsPerClient is the length of each client's part of a history.
	opsPerClient = 30
	// linearCheckTimeout bounds porcupine's search of one history; a
	// history it cannot decide in time counts as a violation.
	linearCheckTimeout = 2 * time.Minute
)
