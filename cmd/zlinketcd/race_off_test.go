//go:build !race

package main

// raceEnabled reports a test binary built with the race detector (the
// subprocess test builds the command the same way, to reuse its packages).
const raceEnabled = false
