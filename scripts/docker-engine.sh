#!/bin/sh
# docker-engine.sh — make sure a Docker engine answers, and stop only the one
# this script started.
#
#   scripts/docker-engine.sh ensure   # an engine answers afterwards (default)
#   scripts/docker-engine.sh status   # says who runs the engine, if any
#   scripts/docker-engine.sh stop     # stops the daemon this script started
#
# `ensure` is idempotent. If an engine already answers (any engine, started by
# anyone), it is used as it is and never stopped by this script. Otherwise,
# as root, it installs Debian's docker.io when dockerd is missing and starts
# dockerd in the background (storage driver overlay2, or vfs where overlay2
# cannot start; cgroup driver cgroupfs), records the daemon's pid in its own
# state folder and waits until the engine answers. `stop` stops that pid and
# nothing else.
#
# No image is pulled: the project's images are built FROM scratch
# (deploy/docker/scratch.Dockerfile).
#
# Environment:
#   ZLINK_DOCKER_STATE    state folder (pid file, daemon log); default
#                         /var/lib/zlink-etcd-docker
#   ZLINK_DOCKER_STORAGE  storage driver to try first; default overlay2
#   ZLINK_DOCKER_WAIT     seconds to wait for the engine; default 60
set -eu

state=${ZLINK_DOCKER_STATE:-/var/lib/zlink-etcd-docker}
pidfile=$state/dockerd.pid
logfile=$state/dockerd.log
wait_s=${ZLINK_DOCKER_WAIT:-60}

say() { echo "docker-engine: $*" >&2; }
die() { say "$*"; exit 1; }

# answers reports whether an engine answers the docker client, within 10 s.
answers() {
	command -v docker >/dev/null 2>&1 || return 1
	timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

# ours prints the pid of the dockerd this script started, if it still runs.
ours() {
	[ -f "$pidfile" ] || return 1
	pid=$(cat "$pidfile")
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] || return 1
	echo "$pid"
}

install_engine() {
	[ "$(id -u)" -eq 0 ] || die "no Docker engine answers and dockerd is not installed; as root this script installs Debian's docker.io (or install and start an engine yourself)"
	command -v apt-get >/dev/null 2>&1 || die "dockerd is not installed and apt-get is missing: install a Docker engine and start it, then retry"
	say "installing Debian's docker.io (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
	# The package's service scripts may fail to start the daemon where no
	# init system runs; the daemon is started below either way.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io >&2 ||
		command -v dockerd >/dev/null 2>&1 ||
		die "apt-get install docker.io failed (see above)"
	# The package may have started a daemon through its service scripts.
	if answers; then
		say "the docker.io package started an engine; it is used as it is"
	fi
}

# start_daemon DRIVER starts dockerd with DRIVER and waits for it; it fails
# (leaving no daemon behind) when the daemon exits or does not answer.
start_daemon() {
	driver=$1
	mkdir -p "$state"
	say "starting dockerd (storage driver $driver, cgroupfs); log: $logfile"
	# setsid: the daemon outlives this script and make, in its own session.
	# It must not keep their open files either: a caller that runs make
	# under a lock (flock FILE make cluster-test) would otherwise hold the
	# lock for as long as the daemon runs. The shell's own descriptors
	# above 2 are closed in the subshell that starts it (3 to 9, the
	# numbers a shell can name; flock and make hand down the low ones).
	(
		for fd in 3 4 5 6 7 8 9; do
			eval "exec $fd>&-"
		done
		exec setsid dockerd \
			--storage-driver="$driver" \
			--exec-opt native.cgroupdriver=cgroupfs \
			--pidfile "$pidfile" \
			>>"$logfile" 2>&1 </dev/null
	) &
	started=$!
	deadline=$(($(date +%s) + wait_s))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if answers; then
			say "engine answers: $(docker version --format 'server {{.Server.Version}}, API {{.Server.APIVersion}}')"
			return 0
		fi
		if ! kill -0 "$started" 2>/dev/null; then
			say "dockerd ($driver) exited; last lines of $logfile:"
			tail -n 5 "$logfile" >&2 || true
			rm -f "$pidfile"
			return 1
		fi
		sleep 1
	done
	say "dockerd ($driver) did not answer within ${wait_s}s; stopping it"
	kill "$started" 2>/dev/null || true
	rm -f "$pidfile"
	return 1
}

ensure() {
	if answers; then
		if pid=$(ours); then
			say "engine answers (dockerd pid $pid, started by this script)"
		else
			say "engine answers (not started by this script: left alone)"
		fi
		return 0
	fi
	if pid=$(ours); then
		die "dockerd pid $pid (started by this script) runs but does not answer; see $logfile, or run '$0 stop' and retry"
	fi
	command -v dockerd >/dev/null 2>&1 || install_engine
	answers && return 0
	[ "$(id -u)" -eq 0 ] || die "no Docker engine answers and starting dockerd needs root"
	first=${ZLINK_DOCKER_STORAGE:-overlay2}
	start_daemon "$first" && return 0
	[ "$first" = vfs ] || { say "retrying with the vfs storage driver"; start_daemon vfs && return 0; }
	die "could not start dockerd; see $logfile"
}

stop() {
	if ! pid=$(ours); then
		rm -f "$pidfile"
		say "no dockerd started by this script runs; nothing stopped"
		return 0
	fi
	say "stopping dockerd pid $pid"
	kill -TERM "$pid"
	deadline=$(($(date +%s) + 30))
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			die "dockerd pid $pid still runs 30 s after SIGTERM; look at $logfile"
		fi
		sleep 1
	done
	rm -f "$pidfile"
	say "stopped"
}

status() {
	if pid=$(ours); then
		say "dockerd pid $pid started by this script"
	fi
	if answers; then
		say "engine answers: $(docker version --format 'server {{.Server.Version}}')"
	else
		say "no engine answers"
		return 1
	fi
}

case ${1:-ensure} in
ensure) ensure ;;
stop) stop ;;
status) status ;;
*) die "usage: $0 [ensure|status|stop]" ;;
esac
