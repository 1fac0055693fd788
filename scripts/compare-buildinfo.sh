#!/bin/sh
# compare-buildinfo.sh — check that two builds of a binary are the same
# build: equal `go version -m` build information (Go version, module and
# dependency versions with their sums, build flags) and, when the Go versions
# match, equal bytes.
#
#   scripts/compare-buildinfo.sh BINARY_A BINARY_B
#
# Use it on the binary make images stages (build/images/NAME/rootfs/...) and
# the one in an image built elsewhere, for example by your CI from
# deploy/docker/Dockerfile:
#
#   id=$(docker create zlink-etcd/zlinketcd:v0.1.0-dev)
#   docker cp "$id":/usr/local/bin/zlinketcd /tmp/zlinketcd.ci; docker rm "$id"
#   scripts/compare-buildinfo.sh build/images/zlinketcd/rootfs/usr/local/bin/zlinketcd /tmp/zlinketcd.ci
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BINARY_A BINARY_B" >&2; exit 2; }
GO=${GO:-go}
a=$(mktemp)
b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
# The first line names the file; the rest is the build information.
"$GO" version -m "$1" | tail -n +2 >"$a"
"$GO" version -m "$2" | tail -n +2 >"$b"
if ! diff -u "$a" "$b" >&2; then
	echo "compare-buildinfo: $1 and $2 differ in their build information (above)" >&2
	exit 1
fi
if ! cmp -s "$1" "$2"; then
	echo "compare-buildinfo: same build information, different bytes: $1 and $2" >&2
	exit 1
fi
echo "compare-buildinfo: same build ($(wc -l <"$a") lines of build information, sha256 $(sha256sum "$1" | cut -c1-16)…): $1 = $2"
