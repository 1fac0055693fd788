package etcdtest

import (
	"context"
	"fmt"
	"sync"

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

// StopTogether stops members at the same moment, as a power cut or a zone
// outage does. With hard set, every server stops (without handing its
// leadership over) before any is closed; then all are closed in parallel.
// Stopping them one by one instead leaves a window, as long as a close
// (up to etcd's request timeout: 5 s plus two election timeouts), in which
// the members not yet stopped still have a quorum. A stopped member's
// client connections stay open until its close ends: requests sent on them
// wait, as they would on a member cut off by a partition, rather than
// being refused as by a killed process. The caller must not use the
// members until they are restarted.
func StopTogether(hard bool, members ...*Member) {
	if hard {
		for _, m := range members {
			m.etcd.Server.HardStop()
		}
	}
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Go(func() { m.Stop(hard) })
	}
	wg.Wait()
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
