//go:build race

package etcdstore

// raceEnabled reports a build with the race detector, which slows the
// store's tests about tenfold.
const raceEnabled = true
