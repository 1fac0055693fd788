#!/bin/sh
# build-static.sh — build one image's static binary and stage its root
# filesystem. The one definition of how the project's images' binaries are
# built: `make images` (offline, on this machine) and the CI Dockerfile
# (deploy/docker/Dockerfile, inside the official golang image) both run it,
# so both paths produce the same binary (scripts/compare-buildinfo.sh).
#
#   scripts/build-static.sh NAME OUTDIR
#
# NAME is zlinketcd, meshnode, etcd or etcdctl. It writes
#   OUTDIR/rootfs/usr/local/bin/NAME   the static binary (CGO_ENABLED=0,
#                                      -trimpath, no VCS stamp, stripped)
#   OUTDIR/rootfs/etc/passwd, group    root, nonroot (65532) and nobody
#   OUTDIR/data/                       etcd only: its empty data directory
#                                      (mode 0700)
# Run from the repository's root. Environment: VERSION (stamped into
# zlinketcd and meshnode as main.version; required for them), GO (default go),
# GOARCH (default the toolchain's).
set -eu

[ $# -eq 2 ] || { echo "usage: $0 NAME OUTDIR" >&2; exit 2; }
name=$1
out=$2
GO=${GO:-go}

case $name in
zlinketcd | meshnode)
	: "${VERSION:?VERSION must be set (see deploy/images.mk)}"
	moddir=.
	pkg=./cmd/zlinketcd
	[ "$name" = meshnode ] && pkg=./examples/meshnode
	ldflags="-s -w -X main.version=$VERSION"
	;;
etcd | etcdctl)
	# Upstream etcd at the version deploy/tools/etcd/go.mod requires; its
	# own version is compiled in (go.etcd.io/etcd/api/v3/version).
	moddir=deploy/tools/etcd
	pkg=go.etcd.io/etcd/server/v3
	[ "$name" = etcdctl ] && pkg=go.etcd.io/etcd/etcdctl/v3
	ldflags="-s -w"
	;;
*)
	echo "$0: unknown image $name (zlinketcd, meshnode, etcd or etcdctl)" >&2
	exit 2
	;;
esac

case $out in /*) ;; *) out=$(pwd)/$out ;; esac
rootfs=$out/rootfs
rm -rf "$rootfs" "$out/data"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc"
if [ "$name" = etcd ]; then
	mkdir -p "$out/data"
	chmod 0700 "$out/data"
fi

# GOFLAGS from the caller's environment would make the two paths differ.
(cd "$moddir" && env GOFLAGS= CGO_ENABLED=0 GOOS=linux \
	"$GO" build -trimpath -buildvcs=false -ldflags "$ldflags" \
	-o "$rootfs/usr/local/bin/$name" "$pkg")

# Names for the uids the images use (distroless's convention): the images
# run as nonroot, 65532.
cat >"$rootfs/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat >"$rootfs/etc/group" <<'GROUP'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
GROUP
chmod 0644 "$rootfs/etc/passwd" "$rootfs/etc/group"
chmod 0755 "$rootfs/usr/local/bin/$name"
echo "built $rootfs/usr/local/bin/$name"
