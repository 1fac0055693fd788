package txn

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
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
	held   *lateTxn
}

func (k *lateKV) Txn(ctx context.Context) clientv3.Txn { return &lateTxn{k: k, ctx: ctx} }

// lateTxn records a transaction and sends it on Commit (or later).
type lateTxn struct {
	k         *lateKV
	ctx       context.Context
	cmps      []clientv3.Cmp
	then, els []clientv3.Op
}

func (t *lateTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.cmps = append(t.cmps, cs...); return t }
func (t *lateTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.then = append(t.then, ops...); return t }
func (t *lateTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.els = append(t.els, ops...); return t }

func (t *lateTxn) send(ctx context.Context) (*clientv3.TxnResponse, error) {
	return t.k.KV.Txn(ctx).If(t.cmps...).Then(t.then...).Else(t.els...).Commit()
}

func (t *lateTxn) Commit() (*clientv3.TxnResponse, error) {
	writes := false
	for _, op := range t.then {
		writes = writes || op.IsPut() || op.IsDelete()
	}
	t.k.mu.Lock()
	n := 0
	if writes {
		t.k.writes++
		n = t.k.writes
		if n == 1 {
			t.k.held = t
		}
	}
	t.k.mu.Unlock()
	switch n {
	case 1:
		return nil, status.Error(codes.Unavailable, "etcdserver: request timed out")
	case 2:
		return nil, status.Error(codes.Unavailable, "etcdserver: no leader")
	}
	return t.send(t.ctx)
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

	resp, err := kv.held.send(t.Context())
	require.NoError(t, err)
	require.True(t, resp.Succeeded, "the late commit's guards still hold: it applies")
}
