// Package perfdoc renders the current-state tables of
// docs/performance.md from the raw `go test -bench` outputs that
// scripts/perf.sh (`make perf`) writes to docs/perf/raw, so that no figure
// in those tables is typed by hand. Each table sits between a pair of
// generated-section markers (BeginMarker, EndMarker); Update rewrites the
// sections whose raw outputs exist and leaves the others as they are. The
// package's TestPerformanceDoc fails when the document does not show the
// raw outputs it has, and rewrites it with -update.
package perfdoc
