package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Member is one running embedded etcd member.
type Member struct {
	etcd      *embed.Etcd
	name      string
	dir       string
	removeDir bool
	clientURL string
	peerURL   string
	tls       bool
	// cfg and plan are what the member was started with (Restart uses them).
	cfg  Config
	plan memberPlan
	// stopped: Stop closed the server and Restart has not started it again.
	stopped bool

	closeOnce sync.Once
	closeErr  error
}

// StartMember starts a single-member cluster and waits until it serves
// clients. Close it when done.
func StartMember(ctx context.Context, cfg Config) (*Member, error) {
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = "member0"
	}
	plan := memberPlan{name: name, clientPort: ports[0], peerPort: ports[1]}
	plan.initialCluster = plan.name + "=" + plan.peerURL()
	m, err := launch(cfg, plan)
	if err != nil {
		return nil, err
	}
	if err := m.waitReady(ctx, cfg.startTimeout()); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// memberPlan is what a member is started with.
type memberPlan struct {
	name           string
	clientPort     int
	peerPort       int
	initialCluster string
}

func (p memberPlan) peerURL() string { return "http://127.0.0.1:" + strconv.Itoa(p.peerPort) }

// launch starts the member's server without waiting for it to be ready.
func launch(cfg Config, plan memberPlan) (*Member, error) {
	m := &Member{name: plan.name, dir: cfg.Dir, tls: cfg.TLS != nil, cfg: cfg, plan: plan}
	if m.dir == "" {
		dir, err := os.MkdirTemp("", "etcdtest-"+plan.name+"-")
		if err != nil {
			return nil, fmt.Errorf("etcdtest: data directory: %w", err)
		}
		m.dir, m.removeDir = dir, true
	}
	scheme := "http"
	if cfg.TLS != nil {
		scheme = "https"
	}
	switch {
	case cfg.Unix && cfg.TLS != nil:
		m.clientURL = "unixs://" + filepath.Join(m.dir, "client.sock")
	case cfg.Unix:
		m.clientURL = "unix://" + filepath.Join(m.dir, "client.sock")
	default:
		m.clientURL = scheme + "://127.0.0.1:" + strconv.Itoa(plan.clientPort)
	}
	m.peerURL = plan.peerURL()

	ec, err := m.serverConfig(cfg, plan)
	if err != nil {
		m.removeData()
		return nil, err
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		m.removeData()
		return nil, fmt.Errorf("etcdtest: start %s: %w", plan.name, err)
	}
	m.etcd = e
	return m, nil
}

// serverConfig builds the embed configuration of the member.
func (m *Member) serverConfig(cfg Config, plan memberPlan) (*embed.Config, error) {
	ec := embed.NewConfig()
	ec.Name = plan.name
	ec.Dir = filepath.Join(m.dir, "data")
	ec.TickMs = cfg.tickMs()
	ec.ElectionMs = cfg.electionMs()
	ec.UnsafeNoFsync = !cfg.Fsync
	ec.BcryptCost = cfg.bcryptCost()
	if cfg.MaxTxnOps > 0 {
		ec.MaxTxnOps = cfg.MaxTxnOps
	}
	if cfg.MaxRequestBytes > 0 {
		ec.MaxRequestBytes = cfg.MaxRequestBytes
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(cfg.logger())
	ec.LogLevel = "error"
	// A small snapshot count keeps memory low in long test runs.
	ec.SnapshotCount = 10000

	cu, err := url.Parse(m.clientURL)
	if err != nil {
		return nil, fmt.Errorf("etcdtest: client url: %w", err)
	}
	pu, err := url.Parse(m.peerURL)
	if err != nil {
		return nil, fmt.Errorf("etcdtest: peer url: %w", err)
	}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	ec.InitialCluster = plan.initialCluster
	ec.InitialClusterToken = "etcdtest"
	if cfg.TLS != nil {
		ec.ClientTLSInfo.CertFile = cfg.TLS.CertFile
		ec.ClientTLSInfo.KeyFile = cfg.TLS.KeyFile
		ec.ClientTLSInfo.TrustedCAFile = cfg.TLS.TrustedCAFile
		ec.ClientTLSInfo.ClientCertAuth = cfg.TLS.ClientCertAuth
	}
	return ec, nil
}

// waitReady waits until the member serves clients, fails, or the timeout or
// ctx ends.
func (m *Member) waitReady(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-m.etcd.Server.ReadyNotify():
		return nil
	case err, ok := <-m.etcd.Err():
		if !ok {
			err = errors.New("server stopped")
		}
		return fmt.Errorf("etcdtest: %s failed to start: %w", m.name, err)
	case <-t.C:
		return fmt.Errorf("etcdtest: %s not ready after %v", m.name, timeout)
	case <-ctx.Done():
		return fmt.Errorf("etcdtest: waiting for %s: %w", m.name, ctx.Err())
	}
}

// Name is the member's name.
func (m *Member) Name() string { return m.name }

// Endpoints are the member's client URLs, ready for clientv3.Config.
func (m *Member) Endpoints() []string { return []string{m.clientURL} }

// Etcd exposes the embedded server, for tests that inject faults.
func (m *Member) Etcd() *embed.Etcd { return m.etcd }

// IsLeader reports whether the member currently leads its cluster.
func (m *Member) IsLeader() bool {
	s := m.etcd.Server
	return s.Leader() == s.MemberID()
}

// Client dials the member with a quiet client. Close it when done. TLS
// members need a client built by the caller with the right credentials.
func (m *Member) Client() (*clientv3.Client, error) {
	return NewClient(m.Endpoints())
}

// NewClient dials endpoints with a quiet logger and a short dial timeout.
func NewClient(endpoints []string) (*clientv3.Client, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcdtest: dial %v: %w", endpoints, err)
	}
	return c, nil
}

// Close stops the member and removes its temporary data directory. It is
// safe to call more than once.
func (m *Member) Close() error {
	m.closeOnce.Do(func() {
		if m.etcd != nil && !m.stopped {
			m.etcd.Close()
		}
		m.closeErr = m.removeData()
	})
	return m.closeErr
}

func (m *Member) removeData() error {
	if !m.removeDir {
		return nil
	}
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("etcdtest: remove %s: %w", m.dir, err)
	}
	return nil
}

// FreePorts chooses n free loopback ports. Every listener stays open until
// all n are chosen, so the ports are distinct. (Processes started by other
// helpers, such as real etcd processes, use it too.)
func FreePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("etcdtest: pick a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
