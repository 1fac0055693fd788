#!/bin/sh
# Re-measures every benchmark docs/performance.md reports, in one run, and
# writes each section's raw `go test -bench` output to
# $PERF_OUT/<section>-fsync-<off|on>.txt (<section>.txt for the sections
# that do not touch etcd's disk), each with a header of config lines
# (date, commit, load average before and after, go version, GOMAXPROCS,
# the command). internal/perfdoc renders docs/performance.md's generated
# tables from them (`make perf` does both). Run it on a quiet machine:
# about 45 minutes with the defaults (docs/performance.md, "Reproduce").
#
# Environment:
#   PERF_SECTIONS  the sections to run, space-separated (default: all):
#                  writes list remove renewal client tick reaction
#   PERF_COUNT     runs of every benchmark, each a test process of its
#                  own (-count 1 in each; default 3; the reaction section
#                  runs once whatever it says, each run being 100 samples)
#   PERF_BENCHTIME overrides every section's -benchtime except remove's
#                  (one removal of 10,000 rows per caller is already one
#                  call); for a quick check: PERF_BENCHTIME=50x PERF_COUNT=1
#   PERF_REMOVE_CALLERS  callers of the removal, a regexp alternation
#                  (default 1|16; 1|16|64 adds 4-10 minutes per run)
#   PERF_OUT       where the raw outputs go (default docs/perf/raw)
#   GO             the go command (default go)
set -eu

cd "$(dirname "$0")/.."
GO=${GO:-go}
PERF_SECTIONS=${PERF_SECTIONS:-writes list remove renewal client tick reaction}
PERF_COUNT=${PERF_COUNT:-3}
PERF_BENCHTIME=${PERF_BENCHTIME:-}
PERF_REMOVE_CALLERS=${PERF_REMOVE_CALLERS:-1|16}
PERF_OUT=${PERF_OUT:-docs/perf/raw}

for s in $PERF_SECTIONS; do
	case $s in
	writes | list | remove | renewal | client | tick | reaction) ;;
	*)
		echo "perf: unknown section $s in PERF_SECTIONS (known: writes list remove renewal client tick reaction)" >&2
		exit 2 ;;
	esac
done
mkdir -p "$PERF_OUT"
out=$(cd "$PERF_OUT" && pwd)
bin=$(mktemp -d "${TMPDIR:-/tmp}/perf.XXXXXX")
trap 'rm -rf "$bin"' EXIT
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	commit="$commit+dirty"
fi
status=0

# testbin PKG: the package's test binary, built once.
testbin() {
	if [ ! -x "$bin/$1.test" ]; then
		echo "perf: building ./$1/ test binary" >&2
		$GO test -c -o "$bin/$1.test" "./$1/"
	fi
	echo "$bin/$1.test"
}

# load: the load averages of uptime.
load() { uptime | sed 's/.*load average[s]*: *//'; }

# measure SECTION FSYNC PKG PATTERN BENCHTIME COUNT [FLAG...]: runs the
# benchmarks of PKG matching PATTERN into the section's raw file, with
# fsync on (FSYNC=on), off (off) or not applicable (-); FLAGs are go test
# flags (-benchmem).
measure() {
	section=$1 fsync=$2 pkg=$3 pattern=$4 benchtime=$5 count=$6
	shift 6
	file=$out/$section.txt
	env=
	if [ "$fsync" != - ]; then
		file=$out/$section-fsync-$fsync.txt
		[ "$fsync" = on ] && env=1
	fi
	test=$(testbin "$pkg")
	cmd="go test -run '^\$' -bench '$pattern' -benchtime $benchtime -count 1${*:+ $*} ./$pkg/"
	[ -n "$env" ] && cmd="ZLINK_BENCH_FSYNC=1 $cmd"
	# The same flags for the test binary: -benchmem is -test.benchmem.
	flags=
	for f in "$@"; do
		flags="$flags -test.${f#-}"
	done
	echo "perf: $section (fsync $fsync): $cmd" >&2
	start=$(date +%s)
	{
		echo "perf-section: $section"
		echo "perf-fsync: $fsync"
		echo "perf-date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "perf-commit: $commit"
		echo "perf-go: $($GO env GOVERSION)"
		echo "perf-gomaxprocs: ${GOMAXPROCS:-$(nproc)}"
		echo "perf-benchtime: $benchtime"
		echo "perf-count: $count"
		echo "perf-processes: $count"
		echo "perf-load-before: $(load)"
		echo "perf-command: $cmd"
	} >"$file"
	# Each run is a test process of its own (-count 1, count times): the
	# runs of one process share its heap, its garbage collector's pacing
	# and the in-process member's state, and agree with each other far
	# better than two processes do (docs/performance.md, "What these
	# figures can and cannot tell"), so the ranges show the spread
	# between processes.
	rc=0
	run=0
	while [ "$run" -lt "$count" ] && [ "$rc" -eq 0 ]; do
		run=$((run + 1))
		(cd "$pkg" && ZLINK_BENCH_FSYNC=$env "$test" -test.run '^$' -test.bench "$pattern" \
			-test.benchtime "$benchtime" -test.count 1 -test.timeout 3h $flags) >>"$file" 2>&1 || rc=$?
	done
	{
		echo "perf-load-after: $(load)"
		echo "perf-seconds: $(($(date +%s) - start))"
		echo "perf-exit: $rc"
	} >>"$file"
	if [ "$rc" -ne 0 ]; then
		echo "perf: $section (fsync $fsync) failed (exit $rc): see $file" >&2
		status=1
	fi
}

# benchtime DEFAULT: PERF_BENCHTIME when set, else DEFAULT.
benchtime() { echo "${PERF_BENCHTIME:-$1}"; }

# both SECTION PKG PATTERN BENCHTIME COUNT: measure fsync off, then on.
both() {
	name=$1
	shift
	for mode in off on; do
		measure "$name" "$mode" "$@"
	done
}

# section NAME: runs the section, fsync off then on where it applies.
section() {
	case $1 in
	writes)
		both writes etcdstore \
			'^Benchmark(RenewOwnerLease|RenewOwnerLeaseKeepAliveOnly|UpdateMeshNodeRevision|UpdatePeerRenew|UpdateSpotRenew|UpdateActorRenew|CompareExchangeAuthorityPreserve|ReserveCommit)$' \
			"$(benchtime 1s)" "$PERF_COUNT" ;;
	list)
		both list etcdstore '^BenchmarkListMeshNodes(Direct)?$' "$(benchtime 1s)" "$PERF_COUNT" ;;
	remove)
		both remove etcdstore "^BenchmarkRemoveAllByOwner\$/^callers=($PERF_REMOVE_CALLERS)\$" 1x "$PERF_COUNT" ;;
	renewal)
		both renewal etcdstore '^BenchmarkOwnerLeaseRenewal$' "$(benchtime 2000x)" "$PERF_COUNT" ;;
	client)
		# A KV that commits without etcd: fsync does not apply.
		measure client - etcdstore '^BenchmarkClientCPU(Concurrent)?$' "$(benchtime 20000x)" "$PERF_COUNT" -benchmem ;;
	tick)
		# memstore: fsync does not apply.
		measure tick - autoconnect '^BenchmarkTickCost$' "$(benchtime 200x)" "$PERF_COUNT" ;;
	reaction)
		# The shared test member (fsync off): the benchmark has no fsync mode.
		measure reaction off autoconnect '^BenchmarkReaction$' "$(benchtime 100x)" 1 ;;
	esac
}

for s in $PERF_SECTIONS; do
	section "$s"
done
exit $status
