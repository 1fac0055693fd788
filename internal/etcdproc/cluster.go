// Package etcdproc runs upstream etcd as real processes on loopback ports,
// for the tests that must kill a member the way an operating system does
// (SIGKILL, kill -9), which an in-process member (etcdtest) cannot show:
// no deferred function, no graceful leadership transfer, no flush. The
// binaries are built from the tools module deploy/tools/etcd at the
// version the project uses (Binaries).
package etcdproc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// Defaults of Config.
const (
	DefaultHeartbeatMs  = 50
	DefaultElectionMs   = 500
	DefaultStartTimeout = 60 * time.Second
)

// Config configures a cluster of processes.
type Config struct {
	// Binary is the etcd binary (Binaries builds it). Required.
	Binary string
	// HeartbeatMs and ElectionMs are etcd's --heartbeat-interval and
	// --election-timeout; 0 means DefaultHeartbeatMs and
	// DefaultElectionMs (the server's minimum lease TTL is then 1 s).
	HeartbeatMs, ElectionMs int
	// NoFsync passes --unsafe-no-fsync (fsync is on by default, as in
	// production).
	NoFsync bool
	// StartTimeout bounds the wait for the cluster to serve; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
}

// Cluster is a running cluster of etcd processes.
type Cluster struct {
	cfg     Config
	dir     string
	Members []*Member
}

// Member is one etcd process of a Cluster.
type Member struct {
	name      string
	dir       string
	clientURL string
	peerURL   string
	initial   string
	cfg       Config
	cmd       *exec.Cmd
	log       *os.File
}

// StartCluster starts size members on free loopback ports, each with its
// own data directory in a temporary directory that Close removes, and
// waits until every member reports healthy.
func StartCluster(ctx context.Context, size int, cfg Config) (*Cluster, error) {
	if cfg.Binary == "" {
		return nil, errors.New("etcdproc: Config.Binary is empty")
	}
	if size < 1 {
		return nil, fmt.Errorf("etcdproc: cluster size %d must be at least 1", size)
	}
	dir, err := os.MkdirTemp("", "etcdproc-")
	if err != nil {
		return nil, fmt.Errorf("etcdproc: %w", err)
	}
	ports, err := etcdtest.FreePorts(2 * size)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{cfg: cfg, dir: dir}
	var peers []string
	for i := range size {
		m := &Member{
			name: fmt.Sprintf("member%d", i), cfg: cfg,
			clientURL: "http://127.0.0.1:" + strconv.Itoa(ports[2*i]),
			peerURL:   "http://127.0.0.1:" + strconv.Itoa(ports[2*i+1]),
		}
		m.dir = filepath.Join(dir, m.name)
		peers = append(peers, m.name+"="+m.peerURL)
		c.Members = append(c.Members, m)
	}
	for _, m := range c.Members {
		m.initial = strings.Join(peers, ",")
		if err := m.start("new"); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	if err := c.WaitHealthy(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// Endpoints are the client URLs of every member.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.clientURL)
	}
	return eps
}

// WaitHealthy waits until every running member reports healthy (it serves
// and the cluster has a leader), or the start timeout or ctx ends.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.startTimeout())
	defer cancel()
	for _, m := range c.Members {
		if !m.Running() {
			continue
		}
		if err := m.waitHealthy(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close kills every member and removes the data directories.
func (c *Cluster) Close() error {
	var errs []error
	for _, m := range c.Members {
		if m.Running() {
			errs = append(errs, m.Kill())
		}
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// Name is the member's name.
func (m *Member) Name() string { return m.name }

// Endpoint is the member's client URL.
func (m *Member) Endpoint() string { return m.clientURL }

// Running reports whether the member's process runs.
func (m *Member) Running() bool { return m.cmd != nil }

// LogPath is the file that receives the member's output.
func (m *Member) LogPath() string { return filepath.Join(m.dir, "etcd.log") }

// Kill kills the process with SIGKILL, as kill -9 does, and reaps it.
func (m *Member) Kill() error { return m.signal(syscall.SIGKILL) }

// Stop asks the process to stop (SIGTERM), as an orderly shutdown does,
// and reaps it; after 10 s it is killed.
func (m *Member) Stop() error {
	if m.cmd == nil {
		return nil
	}
	p := m.cmd.Process
	t := time.AfterFunc(10*time.Second, func() { _ = p.Kill() })
	defer t.Stop()
	return m.signal(syscall.SIGTERM)
}

// Restart starts a stopped member again from its data directory, on the
// same ports, and waits until its client port accepts connections (not for
// health: a member restarted without a quorum serves no requests).
func (m *Member) Restart(ctx context.Context) error {
	if m.Running() {
		return fmt.Errorf("etcdproc: %s is running", m.name)
	}
	if err := m.start("existing"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.startTimeout())
	defer cancel()
	addr := strings.TrimPrefix(m.clientURL, "http://")
	for {
		conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			_ = conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcdproc: %s does not listen after a restart: %w (log %s)", m.name, ctx.Err(), m.LogPath())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// start runs the process.
func (m *Member) start(state string) error {
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("etcdproc: %w", err)
	}
	log, err := os.OpenFile(m.LogPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("etcdproc: %w", err)
	}
	args := []string{
		"--name", m.name, "--data-dir", filepath.Join(m.dir, "data"),
		"--listen-client-urls", m.clientURL, "--advertise-client-urls", m.clientURL,
		"--listen-peer-urls", m.peerURL, "--initial-advertise-peer-urls", m.peerURL,
		"--initial-cluster", m.initial, "--initial-cluster-token", "etcdproc", "--initial-cluster-state", state,
		"--heartbeat-interval", strconv.Itoa(m.cfg.heartbeatMs()), "--election-timeout", strconv.Itoa(m.cfg.electionMs()),
		"--log-level", "warn",
	}
	if m.cfg.NoFsync {
		args = append(args, "--unsafe-no-fsync")
	}
	cmd := exec.Command(m.cfg.Binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("etcdproc: start %s: %w", m.name, err)
	}
	m.cmd, m.log = cmd, log
	return nil
}

// signal sends sig and reaps the process.
func (m *Member) signal(sig syscall.Signal) error {
	if m.cmd == nil {
		return nil
	}
	_ = m.cmd.Process.Signal(sig)
	err := m.cmd.Wait()
	_ = m.log.Close()
	m.cmd, m.log = nil, nil
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return fmt.Errorf("etcdproc: %s: %w", m.name, err)
	}
	return nil
}

// waitHealthy polls the member's /health until it answers healthy.
func (m *Member) waitHealthy(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.clientURL+"/health", nil)
		if err != nil {
			return fmt.Errorf("etcdproc: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			healthy := resp.StatusCode == http.StatusOK
			_ = resp.Body.Close()
			if healthy {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcdproc: %s not healthy: %w (log %s)", m.name, ctx.Err(), m.LogPath())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c Config) heartbeatMs() int { return cmp.Or(c.HeartbeatMs, DefaultHeartbeatMs) }

func (c Config) electionMs() int { return cmp.Or(c.ElectionMs, DefaultElectionMs) }

func (c Config) startTimeout() time.Duration {
	if c.StartTimeout <= 0 {
		return DefaultStartTimeout
	}
	return c.StartTimeout
}
