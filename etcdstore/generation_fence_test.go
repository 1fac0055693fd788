package etcdstore

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// newHookedFixture returns a fixture whose store sends its transactions
// through a kvfake.Hooked (with no hook yet).
func newHookedFixture(t *testing.T) (*fixture, *kvfake.Hooked) {
	t.Helper()
	hooked := &kvfake.Hooked{}
	f := newFixture(t, func(o *Options) {
		hooked.KV = o.KV
		o.KV = hooked
	})
	return f, hooked
}

// interleave makes kv run before, once, just ahead of sending the first
// transaction that puts key: another client's writes land between the
// reads of a decision and its commit. It answers whether before has run.
func interleave(kv *kvfake.Hooked, key string, before func()) (ran func() bool) {
	var done atomic.Bool
	kv.Commit = func(ops kvfake.Ops, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error) {
		for _, op := range ops.Then {
			if op.IsPut() && string(op.KeyBytes()) == key && done.CompareAndSwap(false, true) {
				before()
			}
		}
		return send()
	}
	return done.Load
}

// A generation issued from an absence never repeats (decision E-3), even
// when another client creates the row and deletes it again between the
// decision's read and its commit: the absence guard holds again by then,
// but the row's delete fence has moved, so the commit fails and the
// decision runs again on fresh reads. The first case is the history the
// stress run found (docs/reliability.md): two Reserves of one object, the
// other one aborted.
func TestGenerationsIssuedFromAnAbsenceNeverRepeat(t *testing.T) {
	tests := []struct {
		name string
		// key is the etcd key of the row both clients create.
		key func(f *fixture) string
		// create creates the row on s and answers its generation;
		// remove deletes it again.
		create func(t *testing.T, s *Store, target location.CreationTarget) int64
		remove func(t *testing.T, s *Store, target location.CreationTarget)
	}{
		{
			name: "reserve against a reserve and abort",
			key: func(f *fixture) string {
				k, err := location.EncodeAuthorityKey(location.ObjectUserSpot, "u4")
				require.NoError(t, err)
				return f.s.tableKey(rules.TableAuthority, string(k))
			},
			create: func(t *testing.T, s *Store, target location.CreationTarget) int64 {
				r, err := s.Reserve(t.Context(), userSpotRoom("u4", target))
				require.NoError(t, err)
				require.Equal(t, location.KindReserved, r.Kind)
				return r.Creating.ObjectGeneration
			},
			remove: func(t *testing.T, s *Store, target location.CreationTarget) {
				k, err := location.EncodeAuthorityKey(location.ObjectUserSpot, "u4")
				require.NoError(t, err)
				read, err := s.ReadAuthority(t.Context(), k)
				require.NoError(t, err)
				snap := read.Snapshot
				kind, err := s.AbortCreation(t.Context(), location.AbortRequest{Key: userSpotRoom("u4", target).Key,
					ReservationID: snap.PendingCreation.ReservationID, ExpectedStoreVersion: snap.StoreVersion, Target: target})
				require.NoError(t, err)
				require.Equal(t, location.KindAborted, kind)
			},
		},
		{
			name: "spot claim against a claim and remove",
			key: func(f *fixture) string {
				return f.s.tableKey(location.TableSpots, rules.SpotKey(location.SpotKey{MeshName: "play", SpotID: "s1"}))
			},
			create: func(t *testing.T, s *Store, target location.CreationTarget) int64 {
				return storedIn(t)(s.UpdateSpot(t.Context(), spot("s1", target.Owner), location.IntentNewClaim))
			},
			remove: func(t *testing.T, s *Store, target location.CreationTarget) {
				status, err := s.RemoveSpot(t.Context(), location.SpotKey{MeshName: "play", SpotID: "s1"}, target.Owner)
				require.NoError(t, err)
				require.Equal(t, location.Stored, status)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			f, hooked := newHookedFixture(t)
			a := f.claim(t, "a")
			storedIn(t)(f.s.UpdateMeshNode(ctx, creationNode("m", "node-a", a), location.IntentNewClaim))
			target := location.CreationTarget{MeshName: "m", NodeRID: "node-a", NodeLifecycleGeneration: 1, Owner: a}
			other, err := New(f.s.client, Options{Root: f.s.layout.Root(), Clock: f.clock.Now, MinLeaseSeconds: 600})
			require.NoError(t, err)

			var between int64
			ran := interleave(hooked, tc.key(f), func() {
				between = tc.create(t, other, target)
				tc.remove(t, other, target)
			})
			got := tc.create(t, f.s, target)
			require.True(t, ran(), "the other client wrote between the read and the commit")
			require.Greater(t, got, between, "issued from a fresh read, above the deleted row's")
		})
	}
}
