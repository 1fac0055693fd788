package etcdobserve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// LeaderCheck is the readiness check "etcd": a linearizable read of key
// (its count only) with etcd's require-leader flag, bounded by the check's
// timeout — one cheap request that succeeds only when the member reached
// answers and the cluster has a leader and a quorum, which every store
// write needs. It is a readiness check, never a liveness one: restarting
// the process does not bring etcd back (see package health). kv should be
// the client's own KV, not the store's (whose reads retry transient errors
// until the deadline); key any key the store's user may read.
func LeaderCheck(kv clientv3.KV, key string) health.Check {
	return health.Check{Name: "etcd", Run: func(ctx context.Context) error {
		_, err := kv.Get(clientv3.WithRequireLeader(ctx), key, clientv3.WithCountOnly())
		if err == nil {
			return nil
		}
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("etcd did not answer a read of %s in time: %w (last error: %w)", key, context.Cause(ctx), err)
		case txn.Code(err) == codes.Unavailable && strings.Contains(err.Error(), "no leader"):
			return fmt.Errorf("etcd has no leader (quorum lost or an election under way): %w", err)
		case errors.Is(err, context.Canceled):
			return err
		}
		return fmt.Errorf("etcd refused or failed a read of %s: %w", key, err)
	}}
}

// StoreCheck is LeaderCheck on the store's client, reading the store's
// root key.
func StoreCheck(s *etcdstore.Store) health.Check {
	return LeaderCheck(s.Client().KV, s.Layout().Root())
}
