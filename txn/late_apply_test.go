package txn

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
	"github.com/zlink-systems/zlink-etcd/location"
)

// lateKV holds back the first write transaction (its caller sees a timed
// out request, as when the request is still queued at the server) and
// refuses the second one outright, as a member without a leader does; the
// test then lets the first one reach etcd late.
type lateKV struct {
	clientv3.KV
	mu     sync.Mutex
	writes int
	// held is the first write transaction, held back.
	held TxnOps
}

func (k *lateKV) Txn(ctx context.Context) clientv3.Txn {
	return DeferredTxn(func(ops TxnOps) (*clientv3.TxnResponse, error) {
		n := 0
		if !ops.OnlyReads() {
			k.mu.Lock()
			k.writes++
			n = k.writes
			if n == 1 {
				k.held = ops
			}
			k.mu.Unlock()
		}
		switch n {
		case 1:
			return nil, kvfake.ErrAnswerLost
		case 2:
			return nil, rpctypes.ErrGRPCNoLeader
		}
		return ops.Send(ctx, k.KV)
	})
}

// An operation whose first commit was lost and resolved as not applied,
// and whose second commit was refused, must not promise that nothing was
// applied: the first commit may still land, and here it does.
func TestRunLateApplyIsNotUnavailable(t *testing.T) {
	c := etcdtest.Connect(t)
	kv := &lateKV{KV: c.KV}
	e := New(kv, c.Watcher, Options{})
	k := etcdtest.UniquePrefix(t) + "k"
	_, _, err := Run(t.Context(), e, "set", []string{k}, setData(t, k, "one", nil))
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	require.NotErrorIs(t, err, location.ErrUnavailable, "ErrUnavailable promises that nothing was applied")

	resp, err := kv.held.Send(t.Context(), c.KV)
	require.NoError(t, err)
	require.True(t, resp.Succeeded, "the late commit's guards still hold: it applies")
}
