package etcdstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// A value decoded once per observation is copied out to every reader: what
// one reader changes, the next one does not see.
func TestDecodedValuesAreCopiedOut(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	storedIn(t)(f.s.UpdateMeshNode(t.Context(), meshNode("m", "node-a", a), location.IntentNewClaim))
	o, ok := f.s.engine.Cached(f.s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(location.MeshNodeKey{MeshName: "m", RID: "node-a"})))
	require.True(t, ok)
	first, err := decodeRecord(location.TableMeshNodes, o)
	require.NoError(t, err)
	_, memoized := o.Derived()
	require.True(t, memoized)
	want := first.Value.(location.MeshNodeDescriptor).Clone()

	d := first.Value.(location.MeshNodeDescriptor)
	d.ChannelWeights["orders"] = 1
	d.SpotTypes[0] = "changed"
	d.PopulationCapacity.SpotTypes[0].StableType = "changed"
	second, err := decodeRecord(location.TableMeshNodes, o)
	require.NoError(t, err)
	require.Equal(t, want, second.Value)

	lit := txn.Observation{Key: o.Key, Present: true, Value: o.Value, ModRevision: o.ModRevision}
	fresh, shared, err := sharedRecord(location.TableMeshNodes, lit)
	require.NoError(t, err)
	require.False(t, shared, "a literal observation has no room for the decoded form")
	require.Equal(t, want, fresh.Value)
}
