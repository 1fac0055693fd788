package etcdstore

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/internal/filled"
	"github.com/zlink-systems/zlink-etcd/internal/golden"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/leasemap"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// The stored format is pinned by golden files under testdata/format: a
// change to what a table stores, to an owner-lease value, to the key
// layout, or to the keys an operation writes fails these tests. After a
// deliberate format change, regenerate them and review the diff:
//
//	go test ./etcdstore/ -run TestGolden -update
//
// (package internal/golden).
// goldenNonce and goldenTime stand in for a write's nonce and store time.
const goldenNonce = "0123456789abcdef0123456789abcdef"

var goldenTime = filled.Time

// goldenFile compares got with the golden file name (under
// testdata/format), or rewrites it with -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "format", name), got, "go test ./etcdstore/ -run TestGolden -update")
}

// Every table's stored value: the envelope and the row (all fields set),
// as the store encodes it; and the golden bytes decode back to the row, so
// that values written by earlier builds stay readable.
func TestGoldenTableValues(t *testing.T) {
	for _, spec := range rules.Tables() {
		t.Run(string(spec.Name()), func(t *testing.T) {
			v := filled.Value(spec.Type())
			generation := int64(0)
			if spec.Location() {
				generation = 7
			}
			b, err := encodeValue(spec.Name(), v, generation, goldenNonce, goldenTime)
			require.NoError(t, err)
			goldenFile(t, "values/"+string(spec.Name())+".json", b)

			stored, err := os.ReadFile(filepath.Join("testdata", "format", "values", string(spec.Name())+".json"))
			require.NoError(t, err)
			rec, err := decodeFresh(spec.Name(), txn.Observation{Key: "k", Present: true, Value: stored, ModRevision: 9})
			require.NoError(t, err)
			if row, ok := v.(rules.AuthorityRow); ok {
				row.StoreVersion = versionOf(9) // the key's ModRevision, not stored
				v = row
			}
			require.Equal(t, rules.Record{Value: v, Generation: generation}, rec)
		})
	}
}

// The key layout: every part of it, and every table's canonical key.
func TestGoldenKeyLayout(t *testing.T) {
	l, err := keys.NewLayout("")
	require.NoError(t, err)
	rid := location.RoutingID("node-1")
	nodeRID, err := location.RoutingIDFromHex("0a0b")
	require.NoError(t, err)
	spotKey := rules.SpotKey(location.SpotKey{MeshName: "play", SpotID: "s1"})
	entryClaim, err := rules.EntryClaimKey("entry-1")
	require.NoError(t, err)
	authority, err := location.EncodeAuthorityKey(location.ObjectUserSpot, "room-1")
	require.NoError(t, err)
	// One sample key per table (tests may list tables: this pins them).
	tableKeys := map[rules.Table]string{
		location.TableMeshNodes:         rules.MeshNodeKey(location.MeshNodeKey{MeshName: "play", RID: rid}),
		location.TablePeers:             rules.PeerKey(location.PeerKey{AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", Role: location.PeerRoleRouter, NodeRID: &nodeRID}),
		location.TableSpots:             spotKey,
		location.TableActors:            rules.ActorKey(location.ActorKey{MeshName: "play", ActorID: "a1"}),
		location.TableRoutes:            rules.RouteKey(location.RouteKey{RouteKind: location.RouteSpotName, RouteKey: "lobby"}),
		location.TableClientServers:     rules.ClientServerKey(location.ClientServerKey{ChannelName: "orders", ServerRID: rid}),
		location.TableFanoutPublishers:  rules.FanoutPublisherKey(location.FanoutPublisherKey{ChannelName: "orders", PublisherRID: rid}),
		rules.TableAuthority:            string(authority),
		rules.TableEntryClaims:          string(entryClaim),
		rules.TableLedger:               rules.Bucket{Descriptor: location.MeshNodeKey{MeshName: "play", RID: rid}, Lifecycle: 1, Name: rules.BucketSpot}.Key(),
		rules.TableRelocations:          "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
		rules.TableAggregates:           rules.AggregateKey(location.AggregateFence{AggregateID: "agg-1", AggregateGeneration: 3}),
		rules.TableTransferActive:       rules.TransferSlotKey("play", "a1"),
		rules.TableTransferRecords:      rules.TransferRecordKey(location.ActorTransferRef{MeshName: "play", ActorID: "a1", TransferID: "t1"}),
		rules.TableReservationTerminals: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
		rules.TableOperationTerminals: rules.OperationKey(location.OperationIdentity{SourceNodeRID: rid, SourceNodeGeneration: 2,
			OperationID: location.OperationID{High: 1, Low: 2}}),
	}
	require.Len(t, tableKeys, len(rules.Tables()), "a sample key for every table")
	var b strings.Builder
	line := func(part, key string) { fmt.Fprintf(&b, "%-27s %q\n", part, key) }
	line("root", l.Root())
	for _, spec := range rules.Tables() {
		line("table "+string(spec.Name()), l.TableKey(string(spec.Name()), tableKeys[spec.Name()]))
	}
	line("owner", l.OwnerKey("owner-a"))
	spotScope := string(location.LocationSpot.Scope())
	line("stamp (kind, mesh)", l.StampKey(spotScope, "play"))
	line("stamp (kind)", l.StampKey(spotScope, ""))
	line("stamp (named kind)", l.StampKey(string(location.ScopeMeshNode), ""))
	line("meshnode-stamp", l.MeshNodeStampKey("play"))
	line("by-owner", l.OwnerIndexKey("owner-a", string(location.TableSpots), spotKey))
	line("marker", l.MarkerKey("deletes"))
	line("fence", l.DeleteFenceKey(l.TableKey(string(location.TableSpots), spotKey)))
	line("owner-release", l.ReleaseMarkerKey("owner-a", 42))
	goldenFile(t, "key-layout.txt", []byte(b.String()))
}

// What the store writes, end to end, for a short life of one owner: its
// owner-lease values (claimed, then kept alive), then the keys a mesh
// node, a spot written and removed, and the release of the lease leave,
// with each value that is not a table row (the owner index, change stamps,
// the delete fence, the release marker). Nonces, etcd lease ids and the
// lease generation (a revision) vary between runs: placeholders replace
// them.
func TestGoldenStoredKeys(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a := f.claim(t, "owner-a")
	ownerKey := f.s.layout.OwnerKey("owner-a")
	normalize := placeholders()
	goldenFile(t, "owner-lease.json", normalize(f.value(t, ownerKey)))

	f.clock.Advance(time.Second)
	res, kept, err := f.s.KeepOwnerLease(ctx, a, 15*time.Second)
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)
	kept.Close()
	goldenFile(t, "owner-lease-kept.json", normalize(f.value(t, ownerKey)))

	d := meshNode("play", "node-1", a)
	entry := "entry-1"
	d.EntrySpotID = &entry
	storedIn(t)(f.s.UpdateMeshNode(ctx, d, location.IntentNewClaim))
	storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
	status, err := f.s.RemoveSpot(ctx, location.SpotKey{MeshName: "play", SpotID: "s1"}, a)
	require.NoError(t, err)
	require.Equal(t, location.Stored, status)
	kind, err := f.s.ReleaseOwnerLease(ctx, a)
	require.NoError(t, err)
	require.Equal(t, location.KindReleased, kind)

	resp, err := f.s.client.Get(ctx, f.s.layout.Root(), clientv3.WithPrefix())
	require.NoError(t, err)
	releaseMarker := f.s.layout.ReleaseMarkerKey("owner-a", a.LeaseGeneration)
	var b strings.Builder
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		if key == releaseMarker {
			key = f.s.layout.Root() + "owner-release/" + keys.Segments("owner-a", "<lease generation>")
		}
		value := "(a table row: values/<table>.json)"
		if _, _, isRow := f.s.layout.SplitTableKey(string(kv.Key)); !isRow {
			value = string(normalize(kv.Value))
		}
		fmt.Fprintf(&b, "%s\tlease:%t\t%s\n", strings.TrimPrefix(key, f.s.layout.Root()), kv.Lease != 0, value)
	}
	goldenFile(t, "stored-keys.txt", []byte(b.String()))
}

// placeholders returns a function that replaces, in stored values, what
// varies between runs: write nonces and etcd lease ids.
func placeholders() func([]byte) []byte {
	nonce := regexp.MustCompile(`[0-9a-f]{32}`)
	leaseID := regexp.MustCompile(`"leaseId":"[0-9a-f]+"`)
	return func(b []byte) []byte {
		b = nonce.ReplaceAll(b, []byte("<nonce>"))
		return leaseID.ReplaceAll(b, []byte(`"leaseId":"<etcd lease id>"`))
	}
}

// value reads one key's value directly.
func (f *fixture) value(t *testing.T, key string) []byte {
	t.Helper()
	resp, err := f.s.client.Get(t.Context(), key)
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, key)
	return resp.Kvs[0].Value
}

// The golden owner-lease values decode with the map's decoder.
func TestGoldenOwnerLeasesDecode(t *testing.T) {
	for _, name := range []string{"owner-lease.json", "owner-lease-kept.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "format", name))
		require.NoError(t, err)
		rec, err := leasemap.DecodeRecord([]byte(strings.ReplaceAll(string(b), "<etcd lease id>", "1")))
		require.NoError(t, err, name)
		require.Equal(t, "owner-a", rec.OwnerID)
		require.Equal(t, name == "owner-lease-kept.json", rec.KeepAlive, name)
	}
}
