package etcdproc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// modulePath is the module whose deploy/tools/etcd builds the binaries.
const modulePath = "github.com/zlink-systems/zlink-etcd"

// toolsDir is the tools module, relative to the module's root.
const toolsDir = "deploy/tools/etcd"

// EtcdOrSkip returns the etcd binary that Binaries builds, or skips t
// when it cannot be built: what every test that needs real etcd
// processes starts with.
func EtcdOrSkip(t testing.TB) string {
	t.Helper()
	etcd, _, err := Binaries(t.Context())
	if err != nil {
		t.Skipf("real etcd processes: cannot build etcd from deploy/tools/etcd (the tests build it with go build; it needs the module cache or the module proxy): %v", err)
	}
	return etcd
}

// Binaries returns the paths of the upstream etcd and etcdctl binaries at
// the version deploy/tools/etcd requires, building them when no earlier
// build is cached. The cache is a directory under os.TempDir() keyed by the
// Go version, GOCACHE and the tools module's go.mod and go.sum, so a change
// of any of them builds again. The build needs the modules (from the
// module cache or the proxy); an error says why it failed, and callers
// skip what needs real processes.
func Binaries(ctx context.Context) (etcd, etcdctl string, err error) {
	root, err := moduleRoot()
	if err != nil {
		return "", "", err
	}
	tools := filepath.Join(root, toolsDir)
	goCmd := goCommand()
	key, err := cacheKey(ctx, goCmd, tools)
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(os.TempDir(), "zlink-etcd-bin", key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("etcdproc: binary cache: %w", err)
	}
	etcd, etcdctl = filepath.Join(dir, "etcd"), filepath.Join(dir, "etcdctl")
	for _, b := range []struct{ path, pkg string }{
		{etcd, "go.etcd.io/etcd/server/v3"},
		{etcdctl, "go.etcd.io/etcd/etcdctl/v3"},
	} {
		if err := build(ctx, goCmd, tools, b.pkg, b.path); err != nil {
			return "", "", err
		}
	}
	return etcd, etcdctl, nil
}

// build builds pkg of the tools module to out unless out exists. It builds
// to a temporary name and renames, so concurrent test binaries never run
// a half-written file.
func build(ctx context.Context, goCmd, tools, pkg, out string) error {
	if _, err := os.Stat(out); err == nil {
		return nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", tmp, pkg)
	cmd.Dir = tools
	// GOFLAGS of the test run (-race, -tags, -mod) are not the tools'.
	cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("etcdproc: go build %s in %s: %w: %s", pkg, tools, err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("etcdproc: %w", err)
	}
	return nil
}

// cacheKey hashes what the binaries depend on.
func cacheKey(ctx context.Context, goCmd, tools string) (string, error) {
	h := sha256.New()
	v, err := exec.CommandContext(ctx, goCmd, "env", "GOVERSION", "GOCACHE", "GOOS", "GOARCH").Output()
	if err != nil {
		return "", fmt.Errorf("etcdproc: go env: %w", err)
	}
	h.Write(v)
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(tools, f))
		if err != nil {
			return "", fmt.Errorf("etcdproc: %w", err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// goCommand is the go command of the toolchain running the tests, or the
// one on PATH.
func goCommand() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}

// moduleRoot finds the directory of this module's go.mod above the
// working directory (a test's package directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("etcdproc: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("etcdproc: the module " + modulePath + " is not above the working directory")
		}
		dir = parent
	}
}
