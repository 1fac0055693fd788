# zlink-etcd — see README.md.
GO        ?= go
PKGS      ?= ./...
# Short versions of the long runs execute inside `make test`; `make stress`
# runs them at full length.
TEST_FLAGS ?= -race -count=1 -timeout 15m
STRESS_FLAGS ?= -race -count=1 -timeout 80m -tags stress

.PHONY: all test lint vet fmt bench stress fuzz

all: lint test

test: lint
	$(GO) test $(TEST_FLAGS) $(PKGS)
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 -timeout 10m ./...

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

stress:
	$(GO) test $(STRESS_FLAGS) $(PKGS)

# Re-measures every benchmark of docs/performance.md in one run (fsync off
# and on; about 65 minutes: run it on a quiet machine), writes the raw
# outputs to docs/perf/raw, then renders the document's generated tables
# from them (also after a failed benchmark, whose rows then say "–"; the
# target still fails). PERF_SECTIONS, PERF_COUNT, PERF_BENCHTIME, PERF_REMOVE_CALLERS:
# see scripts/perf.sh (quick check: PERF_COUNT=1 PERF_BENCHTIME=50x
# PERF_SECTIONS=writes make perf).
.PHONY: perf
perf:
	GO=$(GO) scripts/perf.sh; rc=$$?; \
	$(GO) test ./internal/perfdoc/ -run TestPerformanceDoc -count=1 -update && exit $$rc

# Each decoder's fuzz target for a short while (FUZZTIME=1m make fuzz).
FUZZTIME ?= 20s
fuzz:
	@for f in $$($(GO) test -list '^Fuzz' ./keys/ | grep '^Fuzz'); do \
		echo "== $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./keys/ || exit 1; \
	done

# The mesh in miniature on an embedded etcd (see README: zlinketcd demo).
.PHONY: demo
demo: ; $(GO) run ./cmd/zlinketcd demo

# Container images (docs/deployment.md, "Images"). Names and tags come from
# deploy/images.mk, which the Kubernetes manifests' tests read too. `make
# images` needs no registry: scripts/docker-engine.sh starts an engine when
# none answers (installing Debian's docker.io as root), scripts/build-static.sh
# builds each static binary, and deploy/docker/scratch.Dockerfile wraps it
# FROM scratch (meshnode: the example mesh-node service, examples/meshnode).
include deploy/images.mk
DOCKER          ?= docker
IMAGE_BUILD_DIR ?= build/images
IMAGE_REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
PROJECT_IMAGES  := zlinketcd meshnode
ETCD_IMAGES     := etcd etcdctl

.PHONY: images images-engine images-clean images-smoke cluster-test $(addprefix image-,$(PROJECT_IMAGES) $(ETCD_IMAGES))
images: $(addprefix image-,$(PROJECT_IMAGES) $(ETCD_IMAGES))
	@# The legacy builder leaves the stages before --target as untagged
	@# images; remove ours (by label) and nothing else.
	@$(DOCKER) image prune -f --filter label=org.opencontainers.image.vendor=zlink-etcd >/dev/null

images-engine:
	@scripts/docker-engine.sh ensure

$(addprefix image-,$(PROJECT_IMAGES)): image-%: images-engine
	@VERSION=$(VERSION) GO=$(GO) scripts/build-static.sh $* $(IMAGE_BUILD_DIR)/$* && \
	$(DOCKER) build -q -f deploy/docker/scratch.Dockerfile --target $* \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(IMAGE_REVISION) \
		-t $(IMAGE_REPO)/$*:$(IMAGE_TAG) $(IMAGE_BUILD_DIR)/$* && \
	echo "images: built $(IMAGE_REPO)/$*:$(IMAGE_TAG)"

$(addprefix image-,$(ETCD_IMAGES)): image-%: images-engine
	@GO=$(GO) scripts/build-static.sh $* $(IMAGE_BUILD_DIR)/$* && \
	$(DOCKER) build -q -f deploy/docker/scratch.Dockerfile --target $* \
		--build-arg VERSION=$(ETCD_VERSION) --build-arg REVISION=$(IMAGE_REVISION) \
		-t $(IMAGE_REPO)/$*:$(ETCD_VERSION) $(IMAGE_BUILD_DIR)/$* && \
	echo "images: built $(IMAGE_REPO)/$*:$(ETCD_VERSION)"

# Runs the images as Kubernetes runs them (read-only root filesystem, uid
# 65532, no network but a private one): scripts/images-smoke.sh compares each
# image's binary with the one built on the host and runs zlinketcd and a
# one-member etcd; then the rendered base's containers run in Docker with
# their manifests' arguments, environment and TLS Secrets
# (deploy/docker_test.go: three etcd members, the auth set-up Job, the GC
# CronJob, and two mesh nodes once their image exists).
images-smoke: images-engine
	@IMAGE_REPO=$(IMAGE_REPO) IMAGE_TAG=$(IMAGE_TAG) ETCD_VERSION=$(ETCD_VERSION) \
		IMAGE_BUILD_DIR=$(IMAGE_BUILD_DIR) DOCKER=$(DOCKER) scripts/images-smoke.sh
	cd deploy && $(GO) test -tags docker -run InDocker -count=1 -v ./...

# The rendered base in Docker under faults (docs/reliability.md, "Containers
# under faults"): three etcd members and five mesh nodes on private
# networks; the etcd leader killed, a member partitioned, a mesh node cut off
# from etcd, the mesh nodes rolled, the quorum lost; after each, convergence,
# fencing and the acknowledged writes are checked. Not part of `make test`:
# about 3 minutes per round. CLUSTER_ROUNDS rounds (default 2);
# CLUSTER_REPORT=file appends every sample to file as JSON lines.
CLUSTER_ROUNDS ?= 2
cluster-test: images
	cd deploy && ZLINK_CLUSTER_ROUNDS=$(CLUSTER_ROUNDS) ZLINK_CLUSTER_REPORT=$(abspath $(CLUSTER_REPORT)) \
		$(GO) test -tags cluster -run TestClusterUnderFaults -count=1 -timeout 60m -v ./...

# Removes the images and their staged binaries, then stops the Docker daemon
# if scripts/docker-engine.sh started it (an engine someone else runs is left
# alone).
images-clean:
	@if scripts/docker-engine.sh status >/dev/null 2>&1; then \
		$(DOCKER) image rm $(foreach n,$(PROJECT_IMAGES),$(IMAGE_REPO)/$(n):$(IMAGE_TAG)) \
			$(foreach n,$(ETCD_IMAGES),$(IMAGE_REPO)/$(n):$(ETCD_VERSION)) 2>/dev/null || true; \
		$(DOCKER) image prune -f --filter label=org.opencontainers.image.vendor=zlink-etcd >/dev/null; \
	fi
	rm -rf $(IMAGE_BUILD_DIR)
	@scripts/docker-engine.sh stop
