package rules

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestRemoveLocationRow checks the stamps of one removed row per table
// (03 §2, §4.2; A-08 fixed: actors bump their mesh counter too).
func TestRemoveLocationRow(t *testing.T) {
	cases := []struct {
		name       string
		table      Table
		key        string
		value      any
		stamps     []StampCounter
		meshStamps []string
	}{
		{name: "meshNodes", table: location.TableMeshNodes, key: MeshNodeKey(fixture.MNKey()), value: fixture.MN(fixture.Token("a", 1)),
			stamps: []StampCounter{lsStamp(location.LocationPeer, "game"), lsStamp(location.LocationPeer, "")}, meshStamps: []string{"game"}},
		{name: "peers", table: location.TablePeers, key: PeerKey(fixture.PeerKey()), value: fixture.PEER("a", 1),
			stamps: []StampCounter{lsStamp(location.LocationPeer, "play"), lsStamp(location.LocationPeer, "")}},
		{name: "spots", table: location.TableSpots, key: SpotKey(fixture.SpotKey()), value: fixture.SPOT("a", 1),
			stamps: []StampCounter{lsStamp(location.LocationSpot, "play"), lsStamp(location.LocationSpot, "")}},
		{name: "fixed actors", table: location.TableActors, key: ActorKey(fixture.ActorKey()), value: fixture.ACTOR("a", 1),
			stamps: []StampCounter{lsStamp(location.LocationActor, "play"), lsStamp(location.LocationActor, "")}},
		{name: "routes", table: location.TableRoutes, key: RouteKey(fixture.RouteKey()), value: fixture.ROUTE("a", 1),
			stamps: []StampCounter{lsStamp(location.LocationRoute, "")}},
		{name: "clientServers", table: location.TableClientServers, key: ClientServerKey(fixture.CSKey()), value: fixture.CS(fixture.Token("a", 1)),
			stamps: []StampCounter{lsStamp(location.LocationClientServer, "orders"), lsStamp(location.LocationClientServer, "")}},
		{name: "fanoutPublishers", table: location.TableFanoutPublishers, key: FanoutPublisherKey(fixture.FPKey()), value: fixture.FP(fixture.Token("a", 1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := newLSSource()
			src.put(c.table, c.key, c.value, 3)
			tx := NewTx(src)
			require.NoError(t, RemoveLocationRow(tx, c.table, c.key))
			require.Equal(t, []Write{{Table: c.table, Key: c.key}}, tx.Plan().Writes)
			require.Equal(t, c.stamps, tx.Plan().Stamps)
			require.Equal(t, c.meshStamps, tx.Plan().MeshNodeStamps)
			owner, ok := RowOwnerID(c.value)
			require.True(t, ok)
			require.Equal(t, "a", owner)

			again := NewTx(src)
			require.NoError(t, RemoveLocationRow(again, c.table, "absent"))
			require.True(t, again.Plan().Empty(), "an absent row plans nothing")
		})
	}
	t.Run("a value of the wrong type is an internal error", func(t *testing.T) {
		src := newLSSource()
		src.put(location.TableSpots, "k", fixture.ACTOR("a", 1), 1)
		tx := NewTx(src)
		err := RemoveLocationRow(tx, location.TableSpots, "k")
		require.True(t, errors.Is(err, location.ErrInternal), "%v", err)
		require.True(t, tx.Plan().Empty())
		_, ok := RowOwnerID(EntryClaim{})
		require.False(t, ok)
	})
}
