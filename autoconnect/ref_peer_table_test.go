package autoconnect

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/zlink-systems/zlink-etcd/location"
)

// refPeerTable is a PeerPublisher with the reference in-memory peer-table
// semantics (06 §1.6), owner liveness set by the test:
//   - NewClaim conflicts while a row exists under the key and its owner is
//     live (the caller's own row included); otherwise it stores with the
//     per-key counter + 1 (the counter survives removal);
//   - Renew stores only over a row of the same owner whose generation is the
//     given one (or the given one is 0);
//   - Remove deletes only a row of the same owner with the token's
//     generation.
type refPeerTable struct {
	mu       sync.Mutex
	rows     map[string]location.PeerLocation
	counters map[string]int64
	live     map[string]bool
	log      []location.WriteIntent
	results  []location.WriteStatus
}

// newRefPeerTable returns an empty table.
func newRefPeerTable() *refPeerTable {
	return &refPeerTable{rows: map[string]location.PeerLocation{}, counters: map[string]int64{}, live: map[string]bool{}}
}

// refPeerKey is the table key of a peer identity.
func refPeerKey(t location.AutoConnectType, mesh string, role location.PeerRole, rid *location.RoutingID, endpoint string) string {
	identity := endpoint
	if rid != nil {
		identity = "rid:" + rid.Hex()
	}
	return t.String() + "|" + mesh + "|" + role.String() + "|" + identity
}

// setLive sets an owner's liveness.
func (p *refPeerTable) setLive(owner string, live bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live[owner] = live
}

// rowGeneration returns the stored generation of r's key (0 when absent).
func (p *refPeerTable) rowGeneration(r *location.PeerLocation) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rows[refPeerKey(r.AutoConnectType, r.MeshName, r.Role, r.NodeRID, r.Endpoint)].Generation
}

// intents returns the intents of every write so far.
func (p *refPeerTable) intents() []location.WriteIntent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]location.WriteIntent(nil), p.log...)
}

// statuses returns the statuses of every write so far.
func (p *refPeerTable) statuses() []location.WriteStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]location.WriteStatus(nil), p.results...)
}

// UpdatePeer implements PeerWriter.
func (p *refPeerTable) UpdatePeer(_ context.Context, row location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := refPeerKey(row.AutoConnectType, row.MeshName, row.Role, row.NodeRID, row.Endpoint)
	cur, exists := p.rows[key]
	res := location.WriteResult{Status: location.IgnoredStale}
	switch intent {
	case location.IntentNewClaim:
		if exists && p.live[cur.OwnerID] {
			res.Status = location.RejectedConflict
			break
		}
		p.counters[key]++
		row.Generation = p.counters[key]
		p.rows[key] = clonePeer(row)
		res = location.WriteResult{Status: location.Stored, Generation: row.Generation}
	case location.IntentTakeover:
		p.counters[key]++
		row.Generation = p.counters[key]
		p.rows[key] = clonePeer(row)
		res = location.WriteResult{Status: location.Stored, Generation: row.Generation}
	case location.IntentRenew:
		if exists && cur.OwnerID == row.OwnerID && (row.Generation == 0 || row.Generation == cur.Generation) {
			p.rows[key] = clonePeer(row)
			res = location.WriteResult{Status: location.Stored, Generation: p.counters[key]}
		}
	}
	p.log = append(p.log, intent)
	p.results = append(p.results, res.Status)
	return res, nil
}

// RemovePeer implements PeerWriter.
func (p *refPeerTable) RemovePeer(_ context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	endpoint := ""
	if k.Endpoint != nil {
		endpoint = *k.Endpoint
	}
	key := refPeerKey(k.AutoConnectType, k.MeshName, k.Role, k.NodeRID, endpoint)
	cur, exists := p.rows[key]
	if !exists || cur.OwnerID != owner.OwnerID || cur.Generation != owner.LeaseGeneration {
		return location.WriteResult{Status: location.IgnoredStale}, nil
	}
	delete(p.rows, key)
	return location.WriteResult{Status: location.Stored, Generation: cur.Generation}, nil
}

// ListPeers implements PeerLister: the rows matching every set field of f,
// in key order.
func (p *refPeerTable) ListPeers(_ context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []location.PeerLocation{}
	for _, k := range slices.Sorted(maps.Keys(p.rows)) {
		r := p.rows[k]
		if (f.AutoConnectType != nil && r.AutoConnectType != *f.AutoConnectType) ||
			(f.MeshName != nil && r.MeshName != *f.MeshName) ||
			(f.Role != nil && r.Role != *f.Role) ||
			(f.NodeRID != nil && !location.RoutingIDsEqual(r.NodeRID, f.NodeRID)) ||
			(f.Endpoint != nil && r.Endpoint != *f.Endpoint) {
			continue
		}
		out = append(out, clonePeer(r))
	}
	return out, nil
}
