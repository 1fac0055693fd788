#!/bin/sh
# images-smoke.sh — run the images built by `make images` the way the
# Kubernetes manifests run them: read-only root filesystem, uid 65532, all
# capabilities dropped, no privilege escalation, and no network but a private
# Docker network of this script's own (--internal: no route out). Called by
# `make images-smoke`, which passes the names from deploy/images.mk.
#
# Checks:
#   1. each image's binary is the one built on the host (compare-buildinfo.sh);
#   2. zlinketcd runs (`version`, or `--help` while that subcommand is missing);
#   3. an etcd container with a named data volume answers `etcdctl endpoint
#      health`, a put and a get from the etcdctl image, and its metrics
#      listener answers /livez and /readyz (the probes of the StatefulSet);
#   4. the meshnode image prints its version, and --check-config refuses a
#      configuration without endpoints with exit status 2.
# Everything it creates is named zlink-smoke-<pid> and removed on exit.
set -eu

: "${IMAGE_REPO:?}" "${IMAGE_TAG:?}" "${ETCD_VERSION:?}"
DOCKER=${DOCKER:-docker}
IMAGE_BUILD_DIR=${IMAGE_BUILD_DIR:-build/images}
run="$DOCKER run --rm --read-only --user 65532:65532 --cap-drop ALL --security-opt no-new-privileges"
tag() { case $1 in etcd | etcdctl) echo "$IMAGE_REPO/$1:$ETCD_VERSION" ;; *) echo "$IMAGE_REPO/$1:$IMAGE_TAG" ;; esac; }
say() { echo "images-smoke: $*"; }

scratch=$(mktemp -d)
net=zlink-smoke-$$
member=zlink-smoke-etcd-$$
volume=zlink-smoke-etcd-data-$$
cleanup() {
	$DOCKER rm -f "$member" >/dev/null 2>&1 || true
	$DOCKER volume rm "$volume" >/dev/null 2>&1 || true
	$DOCKER network rm "$net" >/dev/null 2>&1 || true
	rm -rf "$scratch"
}
trap cleanup EXIT

# 1. The image holds the host-built binary.
for name in zlinketcd meshnode etcd etcdctl; do
	image=$(tag "$name")
	if ! $DOCKER image inspect "$image" >/dev/null 2>&1; then
		say "missing image $image: run make images"; exit 1
	fi
	user=$($DOCKER image inspect -f '{{.Config.User}}' "$image")
	[ "$user" = 65532:65532 ] || { say "$image runs as '$user', want 65532:65532"; exit 1; }
	id=$($DOCKER create "$image")
	$DOCKER cp "$id:/usr/local/bin/$name" "$scratch/$name" >/dev/null
	$DOCKER rm "$id" >/dev/null
	scripts/compare-buildinfo.sh "$IMAGE_BUILD_DIR/$name/rootfs/usr/local/bin/$name" "$scratch/$name"
done

# 2. zlinketcd.
image=$(tag zlinketcd)
if out=$($run --network none "$image" version 2>&1); then
	say "$image version: $out"
else
	say "$image has no version subcommand yet ($out); --help instead"
	$run --network none "$image" --help | head -n 1
fi

# 3. etcd and etcdctl on a private network.
$DOCKER network create --internal "$net" >/dev/null
$DOCKER volume create "$volume" >/dev/null
$DOCKER run -d --name "$member" --read-only --user 65532:65532 --cap-drop ALL \
	--security-opt no-new-privileges --network "$net" -v "$volume:/var/lib/etcd" \
	"$(tag etcd)" \
	--name "$member" --data-dir /var/lib/etcd/data \
	--listen-client-urls http://0.0.0.0:2379 --advertise-client-urls "http://$member:2379" \
	--listen-peer-urls http://0.0.0.0:2380 --initial-advertise-peer-urls "http://$member:2380" \
	--initial-cluster "$member=http://$member:2380" \
	--listen-metrics-urls http://0.0.0.0:2381 --log-level warn >/dev/null
ctl="$run --network $net $(tag etcdctl) --endpoints http://$member:2379 --dial-timeout 2s --command-timeout 5s"
deadline=$(($(date +%s) + 60))
until health=$($ctl endpoint health 2>&1); do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		say "etcd did not become healthy within 60 s: $health"
		$DOCKER logs --tail 20 "$member" >&2
		exit 1
	fi
	sleep 1
done
say "etcdctl endpoint health: $health"
$ctl put /zlink-smoke/key value >/dev/null
got=$($ctl get --print-value-only /zlink-smoke/key)
[ "$got" = value ] || { say "etcdctl get returned '$got', want 'value'"; exit 1; }
say "etcdctl put/get: ok"
# The probes' endpoints, from the host (the private network's bridge).
ip=$($DOCKER inspect -f "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$member")
for path in livez readyz health; do
	body=$(curl -fsS --max-time 5 "http://$ip:2381/$path")
	say "etcd :2381/$path: $body"
done

# 4. meshnode (the Deployment's own arguments run in deploy/docker_test.go).
image=$(tag meshnode)
say "$image: $($run --network none "$image" --version)"
status=0
out=$($run --network none "$image" --check-config 2>&1) || status=$?
[ "$status" -eq 2 ] || { say "$image --check-config without endpoints: exit status $status, want 2 ($out)"; exit 1; }
say "$image --check-config without endpoints: exit status 2: $out"
say "all checks passed"
