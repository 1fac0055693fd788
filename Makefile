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

# Each decoder's fuzz target for a short while (FUZZTIME=1m make fuzz).
FUZZTIME ?= 20s
fuzz:
	@for f in $$($(GO) test -list '^Fuzz' ./keys/ | grep '^Fuzz'); do \
		echo "== $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./keys/ || exit 1; \
	done

# The mesh in miniature on an embedded etcd (see README: zlinketcd demo).
.PHONY: demo
demo: ; $(GO) run ./cmd/zlinketcd demo
