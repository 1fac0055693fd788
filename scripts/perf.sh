#!/bin/sh
# Re-measures every benchmark docs/performance.md reports, in one run, and
# writes each section's raw `go test -bench` output to
# $PERF_OUT/<section>-fsync-<off|on>.txt (<section>.txt for the sections
# that do not touch etcd's disk), each with a header of config lines
# (date, commit, load average before and after, go version, GOMAXPROCS,
# the command). internal/perfdoc renders docs/performance.md's generated
# tables from them (`make perf` does both). Run it on a quiet machine:
# about 65 minutes with the defaults (docs/performance.md, "Reproduce").
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
#   PERF_ETCD      where etcd runs for the sections that use it (writes
#                  list remove renewal reaction): "process" (default) starts
#                  an upstream etcd process of its own, built from
#                  deploy/tools/etcd, for every benchmark process, with
#                  fsync as the file's mode says, and points the benchmark
#                  at it (ZLINK_EMBEDETCD_ENDPOINTS), as a deployment runs
#                  etcd apart from its clients; "embedded" runs the member
#                  inside the test process (etcdtest), sharing its heap,
#                  garbage collector and scheduler with the client
#   GO             the go command (default go)
set -eu

cd "$(dirname "$0")/.."
GO=${GO:-go}
PERF_SECTIONS=${PERF_SECTIONS:-writes list remove renewal client tick reaction}
PERF_COUNT=${PERF_COUNT:-3}
PERF_BENCHTIME=${PERF_BENCHTIME:-}
PERF_REMOVE_CALLERS=${PERF_REMOVE_CALLERS:-1|16}
PERF_OUT=${PERF_OUT:-docs/perf/raw}
PERF_ETCD=${PERF_ETCD:-process}
case $PERF_ETCD in
process | embedded) ;;
*)
	echo "perf: PERF_ETCD must be process or embedded, not $PERF_ETCD" >&2
	exit 2 ;;
esac

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
etcd_pid=
trap 'stop_etcd; rm -rf "$bin"' EXIT
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

# etcdbin: the upstream etcd and etcdctl binaries, built once into $bin
# from deploy/tools/etcd (the version the cluster test runs).
etcdbin() {
	if [ ! -x "$bin/etcd" ]; then
		echo "perf: building etcd and etcdctl from deploy/tools/etcd" >&2
		(cd deploy/tools/etcd && GOFLAGS= $GO build -o "$bin/etcd" go.etcd.io/etcd/server/v3 &&
			GOFLAGS= $GO build -o "$bin/etcdctl" go.etcd.io/etcd/etcdctl/v3)
	fi
}

# start_etcd FSYNC: a fresh one-member etcd process on loopback, fsync on
# or off, with the embedded member's timing (etcdtest: 10 ms ticks, 100 ms
# election, snapshots every 10,000 entries); sets etcd_endpoint.
start_etcd() {
	etcdbin
	port=$((20000 + ($$ + run * 2) % 20000))
	etcd_endpoint=http://127.0.0.1:$port
	peer=http://127.0.0.1:$((port + 1))
	nofsync=--unsafe-no-fsync
	[ "$1" = on ] && nofsync=
	rm -rf "$bin/etcd-data"
	"$bin/etcd" --name perf --data-dir "$bin/etcd-data" \
		--listen-client-urls "$etcd_endpoint" --advertise-client-urls "$etcd_endpoint" \
		--listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "perf=$peer" \
		--heartbeat-interval 10 --election-timeout 100 --snapshot-count 10000 --log-level error \
		$nofsync >"$bin/etcd.log" 2>&1 &
	etcd_pid=$!
	tries=0
	until "$bin/etcdctl" --endpoints "$etcd_endpoint" --command-timeout 1s endpoint health >/dev/null 2>&1; do
		tries=$((tries + 1))
		if [ "$tries" -ge 50 ] || ! kill -0 "$etcd_pid" 2>/dev/null; then
			echo "perf: etcd did not start on $etcd_endpoint:" >&2
			cat "$bin/etcd.log" >&2
			return 1
		fi
		sleep 0.2
	done
}

stop_etcd() {
	if [ -n "$etcd_pid" ]; then
		kill "$etcd_pid" 2>/dev/null || true
		wait "$etcd_pid" 2>/dev/null || true
		etcd_pid=
	fi
}

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
	where=-
	if [ "$fsync" != - ]; then
		where="in the test process"
		if [ "$PERF_ETCD" = process ]; then
			# The etcd process's fsync is the mode: no private member.
			env=
			etcdbin
			where="in a process of its own (etcd $("$bin/etcd" --version | sed -n 's/^etcd Version: //p'), fsync $fsync)"
			cmd="ZLINK_EMBEDETCD_ENDPOINTS=<a fresh etcd process per run> $cmd"
		fi
	fi
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
		echo "perf-etcd: $where"
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
		endpoints=
		if [ "$fsync" != - ] && [ "$PERF_ETCD" = process ]; then
			start_etcd "$fsync" || { rc=1; break; }
			endpoints=$etcd_endpoint
		fi
		(cd "$pkg" && ZLINK_BENCH_FSYNC=$env ZLINK_EMBEDETCD_ENDPOINTS=$endpoints "$test" -test.run '^$' -test.bench "$pattern" \
			-test.benchtime "$benchtime" -test.count 1 -test.timeout 3h $flags) >>"$file" 2>&1 || rc=$?
		stop_etcd
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
		# 3 s, not 1: at 64 callers 1 s makes 4 rounds, and one round's
		# ratio moves between 0.8 and 1.3 with the machine's load, so one
		# process's ratio spread 0.95-1.14; 3 s makes 6-7 rounds
		# (docs/performance.md, "Reproduce").
		both writes etcdstore \
			'^Benchmark(RenewOwnerLease|RenewOwnerLeaseKeepAliveOnly|UpdateMeshNodeRevision|UpdatePeerRenew|UpdateSpotRenew|UpdateActorRenew|CompareExchangeAuthorityPreserve|ReserveCommit)$' \
			"$(benchtime 3s)" "$PERF_COUNT" ;;
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
		# fsync off (an etcd process, or the shared test member when
		# PERF_ETCD=embedded): the benchmark has no fsync mode of its own.
		measure reaction off autoconnect '^BenchmarkReaction$' "$(benchtime 100x)" 1 ;;
	esac
}

for s in $PERF_SECTIONS; do
	section "$s"
done
exit $status
