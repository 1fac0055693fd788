# The one place that names the project's container images. The root Makefile
# includes it (make images builds exactly these), the Kubernetes base
# (deploy/kubernetes/base/kustomization.yaml, `images:`) sets the same names
# and tags, and deploy/manifests_test.go checks that they agree.
#
# Scheme: $(IMAGE_REPO)/<name>:<tag>. The project's own binaries (zlinketcd,
# meshnode) are tagged with the project's VERSION, which is also stamped into
# them (-X main.version); upstream etcd and etcdctl, built from
# deploy/tools/etcd, are tagged with the etcd version of the root go.mod.
#
# Only `NAME ?= value` lines: deploy tests parse this file.

# Registry and path of every image; push elsewhere with
# `make images IMAGE_REPO=registry.example.com/zlink-etcd`.
IMAGE_REPO ?= zlink-etcd
# The project's version: stamped into the binaries, tag of its images.
VERSION ?= v0.1.0-dev
IMAGE_TAG ?= $(VERSION)
# etcd's version: equal to go.etcd.io/etcd/server/v3 in go.mod and in
# deploy/tools/etcd/go.mod (deploy tests check both).
ETCD_VERSION ?= v3.7.3
