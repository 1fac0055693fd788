#!/bin/sh
# ci-dockerfile-offline.sh — build the images of deploy/docker/Dockerfile (the
# CI path) on a machine that reaches no image registry, and check that each
# holds the same binary as the image `make images` built (the offline path).
#
#   scripts/ci-dockerfile-offline.sh [TARGET...]    # default: zlinketcd etcdctl etcd
#
# The official golang image cannot be pulled here, so a local stand-in takes
# its place (--build-arg GO_IMAGE): FROM scratch with busybox (Debian's
# busybox-static, installed as root when missing), this machine's Go
# toolchain (go env GOROOT) and module cache, GOPROXY=off. The build runs
# with --network none. The Dockerfile's steps run unchanged; only the Go
# toolchain's home differs from the official image, which -trimpath keeps
# out of the binary. Run `make images` first. Removes what it built unless
# KEEP=1.
set -eu
cd "$(dirname "$0")/.."
DOCKER=${DOCKER:-docker}
GO=${GO:-go}
eval "$(sed -n 's/^\([A-Z_]*\) *?= *\([^$]*\)$/\1=\2/p' deploy/images.mk)" # IMAGE_REPO, VERSION, ETCD_VERSION
IMAGE_TAG=$VERSION
targets=${*:-zlinketcd etcdctl etcd}
goversion=$($GO env GOVERSION)
standin=zlink-etcd-local/golang-standin:$goversion
say() { echo "ci-dockerfile-offline: $*"; }

if ! command -v busybox >/dev/null 2>&1 || ! busybox --list >/dev/null 2>&1; then
	[ "$(id -u)" -eq 0 ] || { say "needs busybox (Debian's busybox-static): install it as root"; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends busybox-static >&2
fi
# The Dockerfile's `go mod download` wants every module of both build lists,
# beyond those a build has fetched: fetch them here, through the Go module
# proxy, into the cache the stand-in copies.
$GO mod download
(cd deploy/tools/etcd && $GO mod download)
ctx=build/ci-standin
rm -rf "$ctx"
mkdir -p "$ctx"
cleanup() {
	chmod -R u+w "$ctx" 2>/dev/null || true
	rm -rf "$ctx"
}
trap cleanup EXIT
cp "$(command -v busybox)" "$ctx/busybox"
# Hard links: no copy of the toolchain and the module cache on disk.
cp -al "$($GO env GOROOT)" "$ctx/go" 2>/dev/null || cp -a "$($GO env GOROOT)" "$ctx/go"
cp -al "$($GO env GOMODCACHE)" "$ctx/mod" 2>/dev/null || cp -a "$($GO env GOMODCACHE)" "$ctx/mod"
cat >"$ctx/Dockerfile" <<'STANDIN'
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "mkdir", "-p", "/usr/bin", "/sbin", "/usr/sbin", "/tmp", "/go"]
RUN ["/bin/busybox", "--install", "-s"]
RUN chmod 1777 /tmp
COPY go /usr/local/go
COPY mod /go/pkg/mod
ENV PATH=/usr/local/go/bin:/go/bin:/usr/sbin:/usr/bin:/sbin:/bin GOPATH=/go GOTOOLCHAIN=local \
    GOPROXY=off GOSUMDB=off HOME=/tmp
# Inherited by the Dockerfile's build stages: the clean-up finds them by it.
LABEL zlink-etcd.ci-standin=true
STANDIN
say "building the stand-in $standin (busybox, $goversion, the module cache)"
$DOCKER build -q --force-rm --network none -t "$standin" "$ctx" >/dev/null
cleanup

tmp=$(mktemp -d)
# Whatever happens: remove the check's images, the build stages made from
# the stand-in (by its label), the stand-in, and the scratch folder.
removeall() {
	rm -rf "$tmp"
	[ "${KEEP:-0}" = 1 ] && return
	for target in $targets; do
		case $target in etcd | etcdctl) t=$ETCD_VERSION ;; *) t=$IMAGE_TAG ;; esac
		$DOCKER image rm "zlink-etcd-ci-check/$target:$t" >/dev/null 2>&1 || true
	done
	$DOCKER image prune -f --filter label=zlink-etcd.ci-standin=true >/dev/null 2>&1 || true
	$DOCKER image rm "$standin" >/dev/null 2>&1 || true
	$DOCKER image prune -f --filter label=org.opencontainers.image.vendor=zlink-etcd >/dev/null 2>&1 || true
}
trap removeall EXIT
status=0
for target in $targets; do
	case $target in etcd | etcdctl) version=$ETCD_VERSION ;; *) version=$VERSION ;; esac
	case $target in etcd | etcdctl) tag=$ETCD_VERSION ;; *) tag=$IMAGE_TAG ;; esac
	offline=$IMAGE_REPO/$target:$tag
	ci=zlink-etcd-ci-check/$target:$tag
	$DOCKER image inspect "$offline" >/dev/null 2>&1 || { say "no $offline: run make images first"; exit 1; }
	say "building $ci from deploy/docker/Dockerfile (--network none)"
	start=$(date +%s)
	$DOCKER build -q --force-rm --network none -f deploy/docker/Dockerfile --target "$target" \
		--build-arg GO_IMAGE="$standin" --build-arg VERSION="$version" \
		--build-arg REVISION="$($DOCKER image inspect -f '{{index .Config.Labels "org.opencontainers.image.revision"}}' "$offline")" \
		-t "$ci" . >/dev/null
	say "built in $(($(date +%s) - start)) s"
	for image in "$offline" "$ci"; do
		id=$($DOCKER create "$image")
		$DOCKER cp "$id:/usr/local/bin/$target" "$tmp/$target.$(echo "$image" | tr '/:' '__')" >/dev/null
		$DOCKER rm "$id" >/dev/null
		$DOCKER image inspect -f '{{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.ExposedPorts}} {{json .Config.Labels}}' "$image" >"$tmp/config.$(echo "$image" | tr '/:' '__')"
	done
	a=$tmp/$target.$(echo "$offline" | tr '/:' '__')
	b=$tmp/$target.$(echo "$ci" | tr '/:' '__')
	scripts/compare-buildinfo.sh "$a" "$b" || status=1
	if cmp -s "$tmp/config.$(echo "$offline" | tr '/:' '__')" "$tmp/config.$(echo "$ci" | tr '/:' '__')"; then
		say "$target: same image configuration (user, entrypoint, ports, labels)"
	else
		say "$target: the image configurations differ:"
		cat "$tmp/config.$(echo "$offline" | tr '/:' '__')" "$tmp/config.$(echo "$ci" | tr '/:' '__')"
		status=1
	fi
done
exit $status
