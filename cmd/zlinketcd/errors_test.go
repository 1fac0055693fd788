package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
)

// refusingKV refuses every read and transaction, as etcd refuses a user
// without permission.
type refusingKV struct{ clientv3.KV }

// Get implements clientv3.KV.
func (refusingKV) Get(context.Context, string, ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return nil, rpctypes.ErrGRPCPermissionDenied
}

// Txn implements clientv3.KV.
func (k refusingKV) Txn(ctx context.Context) clientv3.Txn { return refusingTxn{k.KV.Txn(ctx)} }

// refusingTxn refuses to commit.
type refusingTxn struct{ clientv3.Txn }

// If implements clientv3.Txn.
func (t refusingTxn) If(cs ...clientv3.Cmp) clientv3.Txn { return refusingTxn{t.Txn.If(cs...)} }

// Then implements clientv3.Txn.
func (t refusingTxn) Then(ops ...clientv3.Op) clientv3.Txn { return refusingTxn{t.Txn.Then(ops...)} }

// Else implements clientv3.Txn.
func (t refusingTxn) Else(ops ...clientv3.Op) clientv3.Txn { return refusingTxn{t.Txn.Else(ops...)} }

// Commit implements clientv3.Txn.
func (refusingTxn) Commit() (*clientv3.TxnResponse, error) {
	return nil, rpctypes.ErrGRPCPermissionDenied
}

// Each layer says its prefix once: the store names the operation once
// (txn names it too), and the command does not repeat its name when a
// package of the same name said it.
func TestNoDoubledPrefixes(t *testing.T) {
	c := etcdtest.Connect(t)
	s, err := etcdstore.New(c, etcdstore.Options{Root: etcdtest.UniquePrefix(t), KV: refusingKV{KV: c.KV}})
	require.NoError(t, err)
	ctx := t.Context()
	key, err := location.EncodeAuthorityKey(location.ObjectActor, "a")
	require.NoError(t, err)
	rid := location.RoutingID("n")
	calls := map[string]func() error{
		"UpdateActor": func() error {
			_, err := s.UpdateActor(ctx, location.ActorLocation{MeshName: "m", ActorID: "a", ActorType: "t",
				ActorRef:     location.ActorRef{ActorID: "a", ObjectGeneration: 1, MeshName: "m", NodeRID: rid},
				OwnerNodeRID: rid, OwnerNodeGeneration: 1, SpotKind: location.SpotEntry, SpotID: "e", SpotGeneration: 1,
				MembershipEpoch: 1, OwnerID: "o", LeaseGeneration: 1}, location.IntentNewClaim)
			return err
		},
		"ReadAuthority": func() error { _, err := s.ReadAuthority(ctx, key); return err },
		"CollectGarbage": func() error {
			_, err := s.CollectGarbage(ctx, etcdstore.GCOptions{DryRun: true, ReservationTerminalAge: time.Hour})
			return err
		},
	}
	for op, f := range calls {
		t.Run(op, func(t *testing.T) {
			err := f()
			require.ErrorIs(t, err, location.ErrUnavailable)
			require.True(t, strings.HasPrefix(err.Error(), "etcdstore: "+op+": "), err.Error())
			require.Equal(t, 1, strings.Count(err.Error(), op+": "), err.Error())
			requireNoDoubledPrefix(t, err.Error())
		})
	}

	var out strings.Builder
	require.Equal(t, exitFailure, fail(&out, "bench", errors.New("bench: set up client 0: etcdstore: UpdateActor: store unavailable")))
	require.Equal(t, "zlinketcd: bench: set up client 0: etcdstore: UpdateActor: store unavailable\n", out.String())
	out.Reset()
	fail(&out, "inspect", errors.New("inspect: read /x/owner/: etcdserver: no"))
	require.Equal(t, "zlinketcd: inspect: read /x/owner/: etcdserver: no\n", out.String())
}
