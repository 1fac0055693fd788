package etcdstore

// RaceEnabled reports a build with the race detector, for the external
// tests (package etcdstore_test).
const RaceEnabled = raceEnabled
