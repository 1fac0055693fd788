package etcdtest

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/server/v3/embed"
)

// Stop stops the member's server and keeps its data directory, so that
// Restart can bring it back (a process crash and restart, for fault tests).
// With hard set the server stops without handing its leadership over (a
// kill); otherwise it stops gracefully. The caller must not use the member
// between Stop and Restart, nor call Stop or Restart concurrently.
func (m *Member) Stop(hard bool) {
	if hard {
		m.etcd.Server.HardStop()
	}
	m.etcd.Close()
	m.stopped = true
}

// Restart starts a stopped member again from its data directory, on the
// same URLs, and waits until it serves clients.
func (m *Member) Restart(ctx context.Context) error {
	ec, err := m.serverConfig(m.cfg, m.plan)
	if err != nil {
		return err
	}
	// The data directory exists: etcd rejoins the cluster from its log.
	ec.ClusterState = embed.ClusterStateFlagExisting
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return fmt.Errorf("etcdtest: restart %s: %w", m.name, err)
	}
	m.etcd = e
	if err := m.waitReady(ctx, m.cfg.startTimeout()); err != nil {
		e.Close()
		return fmt.Errorf("etcdtest: restart %s: %w", m.name, err)
	}
	m.stopped = false
	return nil
}
