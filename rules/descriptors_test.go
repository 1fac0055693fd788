package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// lsDescTable adapts one descriptor table to the outcome-matrix test.
type lsDescTable struct {
	name  string
	table Table
	key   string
	// row builds the descriptor of owner (id, lease generation) changed by
	// variant (see lsVariants).
	row func(owner string, lg int64, variant string) any
	// write runs the table's update decision.
	write func(tx *Tx, d any, intent location.WriteIntent) (location.WriteResult, error)
	// stamps and meshStamps are the plan's stamps for one changed row.
	stamps     []StampCounter
	meshStamps []string
	// firstGeneration is the generation of a create on a fresh key.
	firstGeneration int64
}

// lsVariants: "same" the stored descriptor; "newer" a higher revision with a
// mutable change; "sameRevision" a mutable change at the same revision;
// "older" a lower revision; "lifecycle" a new lifecycle with a higher
// revision; "immutable" an immutable change with a higher revision.
func lsDescTables() []lsDescTable {
	return []lsDescTable{
		{
			name: "meshNodes", table: location.TableMeshNodes, key: MeshNodeKey(location.MeshNodeKey{MeshName: "game", RID: "node-a"}),
			row: func(owner string, lg int64, variant string) any {
				d := fixture.MN(fixture.Token(owner, lg))
				lsVary(variant, &d.DescriptorRevision, &d.LifecycleGeneration, 8,
					func() { d.State = location.StateDraining },
					func() { d.Endpoint = "tcp://10.0.0.9:7300" })
				return d
			},
			write: func(tx *Tx, d any, intent location.WriteIntent) (location.WriteResult, error) {
				return UpdateMeshNode(tx, d.(location.MeshNodeDescriptor), intent)
			},
			stamps:          []StampCounter{lsStamp(location.LocationPeer, "game"), lsStamp(location.LocationPeer, "")},
			meshStamps:      []string{"game"},
			firstGeneration: 1,
		},
		{
			name: "clientServers", table: location.TableClientServers, key: ClientServerKey(location.ClientServerKey{ChannelName: "orders", ServerRID: "srv-a"}),
			row: func(owner string, lg int64, variant string) any {
				d := fixture.CS(fixture.Token(owner, lg))
				d.DescriptorRevision = 3
				lsVary(variant, &d.DescriptorRevision, &d.LifecycleGeneration, 2,
					func() { d.Weight = 50 },
					func() { d.SecurityIdentity = "cluster-b" })
				return d
			},
			write: func(tx *Tx, d any, intent location.WriteIntent) (location.WriteResult, error) {
				return UpdateClientServer(tx, d.(location.ClientServerDescriptor), intent)
			},
			stamps:          []StampCounter{lsStamp(location.LocationClientServer, "orders"), lsStamp(location.LocationClientServer, "")},
			firstGeneration: 6, // the key's counter continues (5 before)
		},
		{
			name: "fanoutPublishers", table: location.TableFanoutPublishers, key: FanoutPublisherKey(location.FanoutPublisherKey{ChannelName: "events", PublisherRID: "pub-a"}),
			row: func(owner string, lg int64, variant string) any {
				d := fixture.FP(fixture.Token(owner, lg))
				d.DescriptorRevision = 3
				lsVary(variant, &d.DescriptorRevision, &d.LifecycleGeneration, 8,
					func() { d.State = location.StateDraining },
					func() { d.Endpoint = "tcp://10.0.0.2:9501" })
				return d
			},
			write: func(tx *Tx, d any, intent location.WriteIntent) (location.WriteResult, error) {
				return UpdateFanoutPublisher(tx, d.(location.FanoutPublisherDescriptor), intent)
			},
			firstGeneration: 6,
		},
	}
}

// lsVary turns a descriptor into a variant (see lsVariants) through its
// revision and lifecycle generation and two edits: mutable, a change a
// revision update may make, and immutable, one it may not.
func lsVary(variant string, revision, lifecycle *int64, nextLifecycle int64, mutable, immutable func()) {
	switch variant {
	case "newer":
		*revision = 4
		mutable()
	case "sameRevision":
		mutable()
	case "older":
		*revision = 2
	case "lifecycle":
		*revision, *lifecycle = 4, nextLifecycle
	case "immutable":
		*revision = 4
		immutable()
	}
}

// TestDescriptorOutcomeMatrix checks every cell of 02 §2.9 for the three
// descriptor tables: owner a holds lease 1, b lease 2; the stored row has
// generation 5 and was written an hour before now.
func TestDescriptorOutcomeMatrix(t *testing.T) {
	const (
		create   = "create"   // Stored(first generation, now), row written
		replay   = "replay"   // Stored(5, stored updatedAt), nothing planned
		update   = "update"   // Stored(5, now), row written
		takeover = "takeover" // Stored(6, now), row written
		stale    = "stale"
		conflict = "conflict"
	)
	intents := []location.WriteIntent{location.IntentNewClaim, location.IntentRenew, location.IntentTakeover}
	cases := []struct {
		name string
		// stored: variant of the stored row's owner; "" = no row.
		rowOwner string
		rowLease int64
		// leases applied after storing the row.
		aLive   bool
		aGen    int64
		writer  string
		writerG int64
		variant string
		want    [3]string // NewClaim, Renew, Takeover
	}{
		{name: "absent", writer: "a", writerG: 1, aLive: true, aGen: 1, variant: "same", want: [3]string{create, stale, create}},
		{name: "same owner and lease, identical", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "a", writerG: 1, variant: "same", want: [3]string{replay, replay, takeover}},
		{name: "same owner and lease, higher revision, immutable equal", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "a", writerG: 1, variant: "newer", want: [3]string{update, update, takeover}},
		{name: "same owner and lease, same revision with a change", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "a", writerG: 1, variant: "sameRevision", want: [3]string{stale, stale, takeover}},
		{name: "same owner and lease, lower revision", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "a", writerG: 1, variant: "older", want: [3]string{stale, stale, takeover}},
		{name: "same owner and lease, lifecycle change", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "a", writerG: 1, variant: "lifecycle", want: [3]string{stale, stale, takeover}},
		{name: "same owner and lease, immutable change", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "a", writerG: 1, variant: "immutable", want: [3]string{stale, stale, takeover}},
		{name: "same owner, row of an older lease generation", rowOwner: "a", rowLease: 1, aLive: true, aGen: 3, writer: "a", writerG: 3, variant: "same", want: [3]string{takeover, stale, takeover}},
		{name: "other owner live", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "b", writerG: 2, variant: "same", want: [3]string{stale, stale, takeover}},
		{name: "other owner with an expired lease", rowOwner: "a", rowLease: 1, aLive: false, aGen: 1, writer: "b", writerG: 2, variant: "same", want: [3]string{takeover, stale, takeover}},
		{name: "other owner without a lease", rowOwner: "a", rowLease: 1, writer: "b", writerG: 2, variant: "same", want: [3]string{takeover, stale, takeover}},
		{name: "writer without a lease", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "ghost", writerG: 1, variant: "same", want: [3]string{conflict, conflict, conflict}},
		{name: "writer lease generation mismatch", rowOwner: "a", rowLease: 1, aLive: true, aGen: 1, writer: "b", writerG: 3, variant: "same", want: [3]string{conflict, conflict, conflict}},
		{name: "writer lease expired", rowOwner: "a", rowLease: 1, aLive: false, aGen: 1, writer: "a", writerG: 1, variant: "newer", want: [3]string{conflict, conflict, conflict}},
		{name: "absent, writer without a lease", writer: "ghost", writerG: 1, variant: "same", want: [3]string{conflict, conflict, conflict}},
	}
	for _, dt := range lsDescTables() {
		for _, c := range cases {
			for i, intent := range intents {
				t.Run(dt.name+"/"+c.name+"/"+intent.String(), func(t *testing.T) {
					src := newLSSource()
					src.now = fixture.T0().Add(time.Hour)
					src.lease("b", 2, true)
					if c.rowOwner != "" {
						src.put(dt.table, dt.key, lsAt(dt.row(c.rowOwner, c.rowLease, "same"), fixture.T0()), 5)
					} else {
						src.gens[dt.table] = map[string]int64{dt.key: 5} // a removed row's counter
					}
					if c.aGen != 0 {
						src.lease("a", c.aGen, c.aLive)
					}
					before, _ := src.Get(dt.table, dt.key)
					written := dt.row(c.writer, c.writerG, c.variant)
					tx := NewTx(src)
					res, err := dt.write(tx, written, intent)
					require.NoError(t, err)
					plan := tx.Plan()

					var wantRes location.WriteResult
					wrote := false
					switch c.want[i] {
					case create:
						wantRes, wrote = lsStored(dt.firstGeneration, src.now), true
					case replay:
						wantRes = lsStored(5, fixture.T0())
					case update:
						wantRes, wrote = lsStored(5, src.now), true
					case takeover:
						wantRes, wrote = lsStored(6, src.now), true
					case stale:
						wantRes = lsStale()
					case conflict:
						wantRes = lsConflict()
					}
					require.Equal(t, wantRes, res)
					if !wrote {
						require.True(t, plan.Empty(), "plan %+v", plan)
						return
					}
					require.Equal(t, []Write{{Table: dt.table, Key: dt.key, Value: lsAt(written, src.now), Generation: wantRes.Generation, Owned: true}}, plan.Writes)
					require.Equal(t, dt.stamps, plan.Stamps)
					require.Equal(t, dt.meshStamps, plan.MeshNodeStamps)
					src.apply(plan)
					after, _ := src.Get(dt.table, dt.key)
					require.NotEqual(t, before, after)
				})
			}
		}
	}
}

// TestDescriptorRemove checks the remove fencing of 02 §5.2 for descriptors:
// the exact owner token, no liveness; stamps per table.
func TestDescriptorRemove(t *testing.T) {
	for _, dt := range lsDescTables() {
		remove := func(tx *Tx, owner location.OwnerToken) (location.WriteStatus, error) {
			switch dt.table {
			case location.TableMeshNodes:
				return RemoveMeshNode(tx, location.MeshNodeKey{MeshName: "game", RID: "node-a"}, owner)
			case location.TableClientServers:
				return RemoveClientServer(tx, location.ClientServerKey{ChannelName: "orders", ServerRID: "srv-a"}, owner)
			default:
				return RemoveFanoutPublisher(tx, location.FanoutPublisherKey{ChannelName: "events", PublisherRID: "pub-a"}, owner)
			}
		}
		for _, c := range []struct {
			name  string
			owner location.OwnerToken
			row   bool
			want  location.WriteStatus
		}{
			{name: "absent row", owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 1}, want: location.IgnoredStale},
			{name: "other owner", owner: location.OwnerToken{OwnerID: "b", LeaseGeneration: 1}, row: true, want: location.IgnoredStale},
			{name: "other lease generation", owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 2}, row: true, want: location.IgnoredStale},
			{name: "exact token of a dead owner", owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 1}, row: true, want: location.Stored},
		} {
			t.Run(dt.name+"/"+c.name, func(t *testing.T) {
				src := newLSSource()
				if c.row {
					src.put(dt.table, dt.key, lsAt(dt.row("a", 1, "same"), fixture.T0()), 5)
				}
				tx := NewTx(src)
				got, err := remove(tx, c.owner)
				require.NoError(t, err)
				require.Equal(t, c.want, got)
				if c.want != location.Stored {
					require.True(t, tx.Plan().Empty())
					return
				}
				require.Equal(t, []Write{{Table: dt.table, Key: dt.key}}, tx.Plan().Writes)
				require.Equal(t, dt.stamps, tx.Plan().Stamps)
				require.Equal(t, dt.meshStamps, tx.Plan().MeshNodeStamps)
				src.apply(tx.Plan())
				require.Equal(t, int64(5), src.gens[dt.table][dt.key], "the counter survives the removal")
			})
		}
	}
}

// TestDescriptorGenerationsAfterRemove checks 02 §1.3: a re-created mesh
// node restarts at 1, the other descriptor tables continue.
func TestDescriptorGenerationsAfterRemove(t *testing.T) {
	src := newLSSource()
	src.lease("a", 1, true)
	mn := fixture.MN(fixture.Token("a", 1))
	cs := fixture.CS(fixture.Token("a", 1))
	for _, intent := range []location.WriteIntent{location.IntentNewClaim, location.IntentTakeover} {
		lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateMeshNode(tx, mn, intent) })
		lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateClientServer(tx, cs, intent) })
	}
	lsRun(t, src, func(tx *Tx) (location.WriteStatus, error) { return RemoveMeshNode(tx, mn.Key(), mn.Owner()) })
	lsRun(t, src, func(tx *Tx) (location.WriteStatus, error) {
		return RemoveClientServer(tx, cs.Key(), location.OwnerToken{OwnerID: "a", LeaseGeneration: 1})
	})
	res, _ := lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateMeshNode(tx, mn, location.IntentNewClaim) })
	require.Equal(t, lsStored(1, fixture.T0()), res, "mesh nodes restart at 1 (A-04)")
	res, _ = lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateClientServer(tx, cs, location.IntentNewClaim) })
	require.Equal(t, lsStored(3, fixture.T0()), res, "client servers continue their counter")
}

// TestDescriptorWritesCopyInput checks that the planned value is a deep copy
// of the caller's descriptor with the decision's time.
func TestDescriptorWritesCopyInput(t *testing.T) {
	src := newLSSource()
	src.lease("a", 1, true)
	d := fixture.MNE(fixture.Token("a", 1))
	d.MaintenanceWave = lsPtr("wave-1")
	d.UpdatedAt = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
	want := d.Clone()
	want.UpdatedAt = fixture.T0()
	res, _ := lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateMeshNode(tx, d, location.IntentNewClaim) })
	require.Equal(t, lsStored(1, fixture.T0()), res, "the caller's updatedAt is replaced")
	d.ChannelWeights["orders"] = 1
	d.SpotTypes[0] = "x"
	d.ObjectCapabilities[0].Limit = 1
	d.PopulationCapacity.SpotTypes[0].Limit = 1
	*d.EntrySpotID = "x"
	*d.MaintenanceWave = "x"
	got, g, ok := GetMeshNode(NewTx(src), MeshNodeKey(d.Key()))
	require.True(t, ok)
	require.Equal(t, int64(1), g)
	require.Equal(t, want, got)
	got.ChannelWeights["world"] = 0
	again, _, _ := GetMeshNode(NewTx(src), MeshNodeKey(d.Key()))
	require.Equal(t, want, again, "getters return copies")
}
