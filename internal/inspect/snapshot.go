package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/leasemap"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Row is one row of a location table as stored.
type Row[T any] struct {
	// Generation is the row generation kept in the value's envelope.
	Generation int64 `json:"generation"`
	// ModRevision is the etcd revision that last wrote the row.
	ModRevision int64 `json:"modRevision"`
	// OwnerLive says the row's owner id holds an owner lease.
	OwnerLive bool `json:"ownerLive"`
	// Value is the row.
	Value T `json:"value"`
}

// OwnerLease is one owner lease.
type OwnerLease struct {
	OwnerID string `json:"ownerId"`
	// Generation is the lease generation (the owner key's CreateRevision).
	Generation int64 `json:"generation"`
	// LeaseID is the etcd lease, in hex as etcdctl prints it.
	LeaseID string `json:"leaseId"`
	// TTL is what the holder asked for; LeaseSeconds what etcd granted.
	TTLMs        int64 `json:"ttlMs"`
	LeaseSeconds int64 `json:"leaseSeconds"`
	// KeptAlive says the lease is renewed by keep-alives alone (a session
	// on etcd, leasemap.Record.KeepAlive), which do not rewrite its key.
	KeptAlive bool `json:"keptAlive,omitempty"`
	// ExpiresAt is the lease's expiry (store clock), as ReadOwnerLease
	// reports it: the one recorded by the last claim or renewal, or, for a
	// kept lease, derived from the time etcd says its lease has left
	// (leasemap.KeptExpiry); zero for a kept lease when etcd was not asked
	// (RemainingUnknown).
	ExpiresAt time.Time `json:"expiresAt"`
	// RemainingSeconds is what etcd says the lease has left; -1 when the
	// lease is already gone.
	RemainingSeconds int64 `json:"remainingSeconds"`
	// RemainingUnknown: etcd was not asked (a serializable read: the
	// leader answers for leases).
	RemainingUnknown bool `json:"remainingUnknown,omitempty"`
}

// Authority is one authority record.
type Authority struct {
	Key                      location.AuthorityKey        `json:"key"`
	StoreVersion             location.StoreVersion        `json:"storeVersion"`
	ObjectGeneration         int64                        `json:"objectGeneration"`
	AuthorityOwnerGeneration int64                        `json:"authorityOwnerGeneration"`
	Owner                    location.OwnerToken          `json:"owner"`
	OwnerLive                bool                         `json:"ownerLive"`
	Allocation               location.PlacementAllocation `json:"allocation"`
	PendingReservation       string                       `json:"pendingReservation,omitempty"`
	PayloadBytes             int                          `json:"payloadBytes"`
}

// Snapshot is what Read found under a root prefix. Only the sections it
// was asked for are filled.
type Snapshot struct {
	Prefix   string    `json:"prefix"`
	Revision int64     `json:"revision"`
	ReadAt   time.Time `json:"readAt"`
	// Serializable: the snapshot was read from one member's copy, without
	// the leader (possibly stale).
	Serializable bool `json:"serializable,omitempty"`
	// Sections are the sections read, in display order.
	Sections []Section `json:"-"`

	MeshNodes        []Row[location.MeshNodeDescriptor]        `json:"meshNodes"`
	ClientServers    []Row[location.ClientServerDescriptor]    `json:"clientServers"`
	FanoutPublishers []Row[location.FanoutPublisherDescriptor] `json:"fanoutPublishers"`
	Peers            []Row[location.PeerLocation]              `json:"peers"`
	Spots            []Row[location.SpotLocation]              `json:"spots"`
	Actors           []Row[location.ActorLocation]             `json:"actors"`
	Routes           []Row[location.RouteLocation]             `json:"routes"`
	OwnerLeases      []OwnerLease                              `json:"ownerLeases"`
	Authorities      []Authority                               `json:"authorities"`
	// Other counts the keys of the store's bookkeeping tables (entry
	// claims, ledgers, transfers, terminals, stamps, the owner index…).
	Other []KeyCount `json:"otherKeys"`
}

// KeyCount is the number of keys under one part of the layout.
type KeyCount struct {
	Part string `json:"part"`
	Keys int64  `json:"keys"`
}

// Has reports whether the snapshot holds section s.
func (s *Snapshot) Has(sec Section) bool { return slices.Contains(s.Sections, sec) }

// Store is what Read needs of the store besides raw reads; *etcdstore.Store
// implements it.
type Store interface {
	Layout() keys.Layout
	ListAuthorities(ctx context.Context, prefix, cursor string, limit int) (location.AuthorityScanResult, error)
	ListMeshNodes(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error)
}

// Reader reads snapshots of one store.
type Reader struct {
	client *clientv3.Client
	store  Store
	layout keys.Layout
	now    func() time.Time
	// serializable reads from one member without the leader.
	serializable bool
}

// ReaderOption configures a Reader.
type ReaderOption func(*Reader)

// Serializable makes the reader's own range reads serializable: served by
// the member the client talks to from its copy, without the leader, so
// that they work while the cluster has no quorum (the store's reads must
// be made serializable by the store's own KV, see etcdstore.Options.KV).
// The time owner leases have left is then not asked (the leader knows
// it): OwnerLease.RemainingUnknown.
func Serializable() ReaderOption { return func(r *Reader) { r.serializable = true } }

// NewReader returns a reader of store over client (the client the store
// uses, or another one to the same cluster).
func NewReader(client *clientv3.Client, store Store, opts ...ReaderOption) *Reader {
	r := &Reader{client: client, store: store, layout: store.Layout(), now: time.Now}
	for _, o := range opts {
		o(r)
	}
	return r
}

// scanOptions are the options of every scan of the reader at rev (0: the
// latest).
func (r *Reader) scanOptions(rev int64) etcdstore.ScanOptions {
	return etcdstore.ScanOptions{Revision: rev, Serializable: r.serializable}
}

// Read reads the given sections (every section when none is given).
func (r *Reader) Read(ctx context.Context, sections ...Section) (*Snapshot, error) {
	if len(sections) == 0 {
		sections = AllSections()
	}
	snap := &Snapshot{Prefix: r.layout.Root(), ReadAt: r.now().UTC(), Sections: sections, Serializable: r.serializable}
	owners, rev, err := r.readOwners(ctx)
	if err != nil {
		return nil, err
	}
	snap.Revision = rev
	live := map[string]bool{}
	for _, o := range owners {
		live[o.OwnerID] = true
	}
	for _, sec := range sections {
		spec, ok := specOf(sec)
		if !ok {
			return nil, fmt.Errorf("inspect: unknown section %q", sec)
		}
		if err := spec.read(ctx, r, snap, readInput{owners: owners, live: live}); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// readOwners reads the owner leases (and fixes the snapshot's revision).
func (r *Reader) readOwners(ctx context.Context) ([]OwnerLease, int64, error) {
	var out []OwnerLease
	rev, err := etcdstore.Scan(ctx, r.client, r.layout, etcdstore.ScanOwnerLeases(), r.scanOptions(0), func(e etcdstore.Entry) error {
		rec := e.OwnerLease
		out = append(out, OwnerLease{
			OwnerID: e.OwnerID, Generation: e.CreateRevision, LeaseID: strconv.FormatInt(e.Lease, 16),
			TTLMs: rec.TTLMs, LeaseSeconds: rec.LeaseSeconds, KeptAlive: rec.KeepAlive,
			ExpiresAt: time.UnixMilli(rec.ExpiresAtMs).UTC(), RemainingSeconds: -1,
		})
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("inspect: read the owner leases: %w", err)
	}
	return out, rev, nil
}

// fillRemaining asks etcd how long each lease has left, and derives the
// expiry of kept leases from it (their keys do not record it).
func (r *Reader) fillRemaining(ctx context.Context, leases []OwnerLease) error {
	for i := range leases {
		l := &leases[i]
		if r.serializable {
			l.RemainingUnknown = true
			if l.KeptAlive {
				l.ExpiresAt = time.Time{}
			}
			continue
		}
		id, err := strconv.ParseInt(l.LeaseID, 16, 64)
		if err != nil {
			continue
		}
		resp, err := r.client.TimeToLive(ctx, clientv3.LeaseID(id))
		if err != nil {
			return fmt.Errorf("inspect: lease %s of owner %q: %w", l.LeaseID, l.OwnerID, err)
		}
		l.RemainingSeconds = resp.TTL
		if l.KeptAlive {
			l.ExpiresAt = leasemap.KeptExpiry(location.Millis(r.now()), resp.TTL)
		}
	}
	return nil
}

// readTable reads and decodes (etcdstore.Scan) every row of a location
// table at rev; T is the table's value type.
func readTable[T any](ctx context.Context, r *Reader, rev int64, table location.Table, live map[string]bool) ([]Row[T], error) {
	out := []Row[T]{}
	_, err := etcdstore.Scan(ctx, r.client, r.layout, etcdstore.ScanRows(table), r.scanOptions(rev), func(e etcdstore.Entry) error {
		v, ok := e.Row.Value.(T)
		if !ok {
			return fmt.Errorf("%s row %q holds %T", table, e.TableKey, e.Row.Value)
		}
		owner, _ := rules.RowOwnerID(v)
		out = append(out, Row[T]{Generation: e.Row.Generation, ModRevision: e.ModRevision, OwnerLive: live[owner], Value: v})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("inspect: read %s: %w", table, err)
	}
	return out, nil
}

// fillUsage replaces the mesh nodes' actor and spot usage with what the
// store reports (the authority ledgers' usage at the current lifecycle).
func (r *Reader) fillUsage(ctx context.Context, rows []Row[location.MeshNodeDescriptor]) error {
	usage := map[location.MeshNodeKey]location.Population{}
	seen := map[string]bool{}
	for _, row := range rows {
		mesh := row.Value.MeshName
		if seen[mesh] {
			continue
		}
		seen[mesh] = true
		token := ""
		for {
			page, err := r.store.ListMeshNodes(ctx, mesh, location.PageRequest{PageSize: 1000, ContinuationToken: token})
			if errors.Is(err, location.ErrScanExpired) {
				break // keep the stored numbers
			}
			if err != nil {
				return fmt.Errorf("inspect: list mesh nodes of %q: %w", mesh, err)
			}
			for _, d := range page.Items {
				usage[d.Key()] = d.PopulationCapacity
			}
			if page.ContinuationToken == "" || page.ContinuationToken == token {
				break
			}
			token = page.ContinuationToken
		}
	}
	for i := range rows {
		if u, ok := usage[rows[i].Value.Key()]; ok {
			rows[i].Value.PopulationCapacity = u
		}
	}
	return nil
}

// readAuthorities lists every authority record through the store.
func (r *Reader) readAuthorities(ctx context.Context, live map[string]bool) ([]Authority, error) {
	const maxRestarts = 3
	for restart := 0; ; restart++ {
		var out []Authority
		cursor := ""
		expired := false
		for {
			res, err := r.store.ListAuthorities(ctx, "", cursor, 1000)
			if err != nil {
				return nil, fmt.Errorf("inspect: list authorities: %w", err)
			}
			if res.Kind == location.KindScanExpired {
				expired = true
				break
			}
			for _, e := range res.Items {
				out = append(out, authorityOf(e, live))
			}
			if res.NextCursor == "" {
				return out, nil
			}
			cursor = res.NextCursor
		}
		if expired && restart >= maxRestarts {
			return nil, fmt.Errorf("inspect: list authorities: the scan kept expiring (records change too fast)")
		}
	}
}

// authorityOf flattens one listed authority record.
func authorityOf(e location.AuthorityEntry, live map[string]bool) Authority {
	a := Authority{
		Key: e.Key, StoreVersion: e.Snapshot.StoreVersion, ObjectGeneration: e.Snapshot.ObjectGeneration,
		AuthorityOwnerGeneration: e.Snapshot.AuthorityOwnerGeneration, Owner: e.Snapshot.Owner,
		OwnerLive: live[e.Snapshot.Owner.OwnerID], Allocation: e.Snapshot.Allocation, PayloadBytes: len(e.Snapshot.Payload),
	}
	if p := e.Snapshot.PendingCreation; p != nil {
		a.PendingReservation = p.ReservationID
	}
	return a
}

// otherParts are the parts of the layout that Other counts: the
// bookkeeping tables (neither location tables nor owned, in registry
// order), the change stamps and the owner index.
func (r *Reader) otherParts() []KeyCount {
	var parts []KeyCount
	for _, spec := range rules.Tables() {
		if !spec.Location() && !spec.Owned() {
			parts = append(parts, KeyCount{Part: string(spec.Name())})
		}
	}
	return append(parts, KeyCount{Part: "stamp"}, KeyCount{Part: "meshnode-stamp"}, KeyCount{Part: "by-owner"})
}

// countOther counts the keys of each bookkeeping part at rev.
func (r *Reader) countOther(ctx context.Context, rev int64) ([]KeyCount, error) {
	parts := r.otherParts()
	for i := range parts {
		prefix := r.layout.Root() + parts[i].Part + "/"
		opts := []clientv3.OpOption{clientv3.WithRange(keys.PrefixEnd(prefix)), clientv3.WithCountOnly(), clientv3.WithRev(rev)}
		if r.serializable {
			opts = append(opts, clientv3.WithSerializable())
		}
		resp, err := r.client.Get(ctx, prefix, opts...)
		if err != nil {
			return nil, fmt.Errorf("inspect: count %s: %w", prefix, err)
		}
		parts[i].Keys = resp.Count
	}
	return parts, nil
}
