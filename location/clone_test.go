package location_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/reflectfill"
	"github.com/zlink-systems/zlink-etcd/location"
)

// The clone tests fill every field of a value by reflection (so a field added
// later is covered without touching the test), clone it, and prove that
//   - the clone equals the original,
//   - no slice, map or pointer of the clone shares memory with the original,
//   - changing everything reachable from the clone leaves the original as it
//     was,
//   - nil stays nil and empty stays empty.

// cloneMutate changes every value reachable from v, through every slice,
// map and pointer.
func cloneMutate(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 100)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 100)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			cloneMutate(t, v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			cloneMutate(t, e)
			v.SetMapIndex(k, e)
		}
		k := reflect.New(v.Type().Key()).Elem()
		seed := 1000
		reflectfill.Fill(t, k, &seed, false)
		v.SetMapIndex(k, reflect.New(v.Type().Elem()).Elem())
	case reflect.Pointer:
		if !v.IsNil() {
			cloneMutate(t, v.Elem())
		}
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			v.Set(reflect.ValueOf(t.Add(time.Hour)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				cloneMutate(t, v.Field(i))
			}
		}
	}
}

// cloneRequireDisjoint fails when a slice, map or pointer of b shares memory
// with the one at the same place in a.
func cloneRequireDisjoint(t *testing.T, a, b reflect.Value, path string) {
	t.Helper()
	switch a.Kind() {
	case reflect.Slice:
		if a.Len() > 0 {
			require.NotEqual(t, a.Pointer(), b.Pointer(), "%s shares its backing array", path)
		}
		for i := 0; i < a.Len(); i++ {
			cloneRequireDisjoint(t, a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if !a.IsNil() {
			require.NotEqual(t, a.Pointer(), b.Pointer(), "%s is the same map", path)
		}
		for _, k := range a.MapKeys() {
			cloneRequireDisjoint(t, a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", path, k))
		}
	case reflect.Pointer:
		if !a.IsNil() {
			require.NotEqual(t, a.Pointer(), b.Pointer(), "%s is the same pointer", path)
			cloneRequireDisjoint(t, a.Elem(), b.Elem(), "*"+path)
		}
	case reflect.Struct:
		if a.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := 0; i < a.NumField(); i++ {
			cloneRequireDisjoint(t, a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)
		}
	}
}

// cloneCheck runs every clone property for one type.
func cloneCheck[T location.Cloner[T]](t *testing.T) {
	t.Helper()
	fixture := func(empty bool) T {
		var v T
		seed := 0
		reflectfill.Fill(t, reflect.ValueOf(&v).Elem(), &seed, empty)
		return v
	}
	orig, want := fixture(false), fixture(false)
	c := orig.Clone()
	require.Equal(t, want, c, "the clone equals the original")
	cloneRequireDisjoint(t, reflect.ValueOf(orig), reflect.ValueOf(c), reflect.TypeFor[T]().Name())
	cloneMutate(t, reflect.ValueOf(&c).Elem())
	require.NotEqual(t, want, c, "the mutation changed the clone")
	require.Equal(t, want, orig, "changing the clone left the original alone")

	// And the other way round: changing the original leaves the clone alone.
	c = orig.Clone()
	cloneMutate(t, reflect.ValueOf(&orig).Elem())
	require.Equal(t, want, c)

	var zero T
	require.Equal(t, zero, zero.Clone(), "nil stays nil")
	empty, emptyWant := fixture(true), fixture(true)
	require.Equal(t, emptyWant, empty.Clone(), "empty stays empty (not nil)")
}

func TestClone(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Population", cloneCheck[location.Population]},
		{"MeshNodeDescriptor", cloneCheck[location.MeshNodeDescriptor]},
		{"ClientServerDescriptor", cloneCheck[location.ClientServerDescriptor]},
		{"FanoutPublisherDescriptor", cloneCheck[location.FanoutPublisherDescriptor]},
		{"PeerKey", cloneCheck[location.PeerKey]},
		{"PeerLocation", cloneCheck[location.PeerLocation]},
		{"PeerFilter", cloneCheck[location.PeerFilter]},
		{"SpotLocation", cloneCheck[location.SpotLocation]},
		{"SpotFilter", cloneCheck[location.SpotFilter]},
		{"ActorLocation", cloneCheck[location.ActorLocation]},
		{"ActorFilter", cloneCheck[location.ActorFilter]},
		{"RouteLocation", cloneCheck[location.RouteLocation]},
		{"RouteFilter", cloneCheck[location.RouteFilter]},
		{"ChangeStampScope", cloneCheck[location.ChangeStampScope]},
		{"ActorTransferPrepareRequest", cloneCheck[location.ActorTransferPrepareRequest]},
		{"ActorTransferRecord", cloneCheck[location.ActorTransferRecord]},
		{"ActorTransferWriteResult", cloneCheck[location.ActorTransferWriteResult]},
		{"CapacityVector", cloneCheck[location.CapacityVector]},
		{"PlacementAllocation", cloneCheck[location.PlacementAllocation]},
		{"PendingCreation", cloneCheck[location.PendingCreation]},
		{"AuthoritySnapshot", cloneCheck[location.AuthoritySnapshot]},
		{"AuthorityReadResult", cloneCheck[location.AuthorityReadResult]},
		{"AuthorityMutation", cloneCheck[location.AuthorityMutation]},
		{"CompareExchangeResult", cloneCheck[location.CompareExchangeResult]},
		{"AuthorityEntry", cloneCheck[location.AuthorityEntry]},
		{"AuthorityScanResult", cloneCheck[location.AuthorityScanResult]},
		{"CreationIntent", cloneCheck[location.CreationIntent]},
		{"TerminalPublication", cloneCheck[location.TerminalPublication]},
		{"TerminalRecord", cloneCheck[location.TerminalRecord]},
		{"TerminalReadResult", cloneCheck[location.TerminalReadResult]},
		{"ReserveRequest", cloneCheck[location.ReserveRequest]},
		{"ReserveResult", cloneCheck[location.ReserveResult]},
		{"CommitRequest", cloneCheck[location.CommitRequest]},
		{"CommitResult", cloneCheck[location.CommitResult]},
		{"CreationCompletion", cloneCheck[location.CreationCompletion]},
		{"CompleteCreationRequest", cloneCheck[location.CompleteCreationRequest]},
		{"CompleteCreationResult", cloneCheck[location.CompleteCreationResult]},
		{"RelocationReservationRequest", cloneCheck[location.RelocationReservationRequest]},
		{"RelocationReserveResult", cloneCheck[location.RelocationReserveResult]},
		{"AggregateParticipant", cloneCheck[location.AggregateParticipant]},
		{"AggregatePrepareRequest", cloneCheck[location.AggregatePrepareRequest]},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

func TestCloneAllAndClonePage(t *testing.T) {
	require.Nil(t, location.CloneAll[location.PeerLocation](nil))
	require.Equal(t, []location.PeerLocation{}, location.CloneAll([]location.PeerLocation{}))

	p := location.Page[location.MeshNodeDescriptor]{Items: []location.MeshNodeDescriptor{vMN(), vMN()}, ContinuationToken: "2"}
	c := location.ClonePage(p)
	require.Equal(t, p, c)
	c.Items[0].ObjectCapabilities[0].Limit = 1
	c.Items[1].ChannelWeights["orders"] = 1
	c.Items = append(c.Items[:1], c.Items[0])
	require.Equal(t, int64(100), p.Items[0].ObjectCapabilities[0].Limit)
	require.Equal(t, int64(100), p.Items[1].ChannelWeights["orders"])
	require.Equal(t, "node-a", string(p.Items[1].RID))
}

func TestCloneScenarios(t *testing.T) {
	t.Run("LS-157 route value bytes are copied", func(t *testing.T) {
		v := []byte{1, 2, 3, 4}
		r := vRoute()
		r.Value = v
		stored := r.Clone()
		v[0] = 9
		out := stored.Clone()
		out.Value[1] = 9
		require.Equal(t, []byte{1, 2, 3, 4}, stored.Value)
	})
	t.Run("LS-203 returned rows are copies", func(t *testing.T) {
		stored := vMN()
		listed := stored.Clone()
		listed.ObjectCapabilities[0].StableType = "changed"
		listed.PopulationCapacity.SpotTypes[0].Limit = 1
		require.Equal(t, vMN(), stored)

		peer := vPeer()
		out := peer.Clone()
		out.Metadata["route-endpoint"] = "changed"
		*out.NodeRID = "node-9"
		require.Equal(t, vPeer(), peer)
	})
	t.Run("AUTH-016 snapshot payload is copied", func(t *testing.T) {
		stored := location.AuthoritySnapshot{Payload: []byte("ready"), PendingCreation: &location.PendingCreation{RequestSHA256: []byte{1}}}
		read := location.AuthorityReadResult{Kind: location.KindSnapshot, Snapshot: &stored}
		out := read.Clone()
		copy(out.Snapshot.Payload, "XXXXX")
		out.Snapshot.PendingCreation.RequestSHA256[0] = 2
		require.Equal(t, []byte("ready"), stored.Payload)
		require.Equal(t, []byte{1}, stored.PendingCreation.RequestSHA256)
	})
}
