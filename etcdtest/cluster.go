package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Cluster is a running cluster of embedded members.
type Cluster struct {
	// Members are the cluster's members, in start order.
	Members []*Member
}

// StartCluster starts size members that form one cluster and waits until
// every one serves clients. cfg.Dir and cfg.Name are ignored (each member
// gets its own temporary directory and the name "memberN"). Close it when
// done.
func StartCluster(ctx context.Context, size int, cfg Config) (*Cluster, error) {
	if size < 1 {
		return nil, fmt.Errorf("etcdtest: cluster size %d must be at least 1", size)
	}
	// Every port is chosen while all the probe listeners are open, so no two
	// members collide.
	ports, err := FreePorts(2 * size)
	if err != nil {
		return nil, err
	}
	plans := make([]memberPlan, size)
	peers := make([]string, size)
	for i := range plans {
		plans[i] = memberPlan{name: fmt.Sprintf("member%d", i), clientPort: ports[2*i], peerPort: ports[2*i+1]}
		peers[i] = plans[i].name + "=" + plans[i].peerURL()
	}
	initial := strings.Join(peers, ",")

	c := &Cluster{}
	mcfg := cfg
	mcfg.Dir, mcfg.Name = "", ""
	for _, p := range plans {
		p.initialCluster = initial
		m, err := launch(mcfg, p)
		if err != nil {
			return nil, errors.Join(err, c.Close())
		}
		c.Members = append(c.Members, m)
	}
	for _, m := range c.Members {
		if err := m.waitReady(ctx, cfg.startTimeout()); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	return c, nil
}

// Endpoints are the client URLs of every member.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.Endpoints()...)
	}
	return eps
}

// Client dials every member with a quiet client. Close it when done.
func (c *Cluster) Client() (*clientv3.Client, error) { return NewClient(c.Endpoints()) }

// Leader returns the index of the member that currently leads, or -1.
func (c *Cluster) Leader() int {
	for i, m := range c.Members {
		if m.IsLeader() {
			return i
		}
	}
	return -1
}

// Close stops every member and removes their temporary directories.
func (c *Cluster) Close() error {
	var errs []error
	for _, m := range c.Members {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}
