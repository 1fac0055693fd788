package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// The invariants checked after every history besides linearizability.

// effect is what a possibly-applied write did to its key, for the lost
// write check: the key it wrote, and whether it is known to have changed
// it (an acknowledged success) or may have (an unknown outcome).
type effect struct {
	key   string
	known bool
}

// writeEffect returns the key a record's write may have changed, or "".
func writeEffect(r *record) effect {
	cl := r.classify()
	if cl != classOK && cl != classUnknown {
		return effect{}
	}
	known := cl == classOK
	c := r.c
	switch c.kind {
	case opUpdateSpot:
		if known {
			if res, _ := r.res.(location.WriteResult); res.Status != location.Stored {
				return effect{}
			}
		}
		return effect{key: "spot " + c.spot.SpotID, known: known}
	case opRemoveSpot:
		if known && r.res != location.Stored {
			return effect{}
		}
		return effect{key: "spot " + c.spotKey.SpotID, known: known}
	case opClaim:
		if known && r.res.(location.OwnerLeaseClaimResult).Kind != location.KindClaimed {
			return effect{}
		}
		return effect{key: "lease " + c.owner, known: known}
	case opRelease:
		if known && r.res != location.KindReleased {
			return effect{}
		}
		return effect{key: "lease " + c.token.OwnerID, known: known}
	case opExpire:
		// An expiry of an owner without a lease changes nothing, but the
		// call cannot tell: it counts as a possible change.
		return effect{key: "lease " + c.owner, known: false}
	case opExpireGen:
		return effect{key: "lease " + c.token.OwnerID, known: false}
	case opReserve:
		if known && r.res.(location.ReserveResult).Kind != location.KindReserved {
			return effect{}
		}
		return effect{key: "auth " + authKeyOf(c.reserve.Key), known: known}
	case opCommit:
		if known && r.res.(location.CommitResult).Kind != location.KindCommitted {
			return effect{}
		}
		return effect{key: "auth " + authKeyOf(c.commit.Key), known: known}
	case opAbort:
		if known && r.res != location.KindAborted {
			return effect{}
		}
		return effect{key: "auth " + authKeyOf(c.abort.Key), known: known}
	case opCAS:
		if known {
			if k := r.res.(location.CompareExchangeResult).Kind; k != location.KindStored && k != location.KindDeleted {
				return effect{}
			}
		}
		return effect{key: "auth " + string(c.authKey), known: known}
	}
	return effect{}
}

// checkLostWrites checks that the last acknowledged write of every key is
// what the final reads show, for every key whose last write is certain: an
// acknowledged write that every other possibly-applied write of the key
// ended before. Keys with a later or concurrent uncertain write are
// skipped (the linearizability check covers them).
func (h *harness) checkLostWrites(records []*record) {
	byKey := map[string][]*record{}
	for _, r := range records {
		if r.client == h.cfg.clients+1 {
			continue
		}
		if e := writeEffect(r); e.key != "" {
			byKey[e.key] = append(byKey[e.key], r)
		}
	}
	final := h.finalRecords()
	for _, rs := range byKey {
		var last *record
		for _, r := range rs {
			if !writeEffect(r).known {
				continue
			}
			certain := true
			for _, o := range rs {
				end := o.end
				if !writeEffect(o).known {
					end = math.MaxInt64
				}
				if o != r && end >= r.start {
					certain = false
					break
				}
			}
			if certain {
				last = r
			}
		}
		if last == nil {
			continue
		}
		h.mu.Lock()
		h.report.checkedKeys++
		h.mu.Unlock()
		if d := lostWrite(last, final); d != "" {
			h.mu.Lock()
			h.report.lostWrites++
			h.mu.Unlock()
			h.violation("lost write: %v answered %+v, but the final read shows %s", last.c, last.res, d)
		}
	}
}

// lostWrite compares an acknowledged last write with the final reads; it
// returns "" when they agree, or what the final read shows.
func lostWrite(w *record, final map[string]*record) string {
	c := w.c
	read := func(rc call) any {
		if r, ok := final[rc.String()]; ok {
			return r.res
		}
		return nil
	}
	switch c.kind {
	case opUpdateSpot:
		got, _ := read(call{kind: opResolveSpot, spotKey: c.spot.Key()}).(*location.SpotLocation)
		if got == nil || got.OwnerID != c.spot.OwnerID || got.LeaseGeneration != c.spot.LeaseGeneration {
			return fmt.Sprintf("%+v", got)
		}
	case opRemoveSpot:
		if got, _ := read(call{kind: opResolveSpot, spotKey: c.spotKey}).(*location.SpotLocation); got != nil {
			return fmt.Sprintf("%+v", got)
		}
	case opClaim:
		got, _ := read(call{kind: opReadLease, owner: c.owner}).(location.OwnerLeaseReadResult)
		if got.Kind != location.KindFound || got.Token != w.res.(location.OwnerLeaseClaimResult).Token {
			return fmt.Sprintf("%+v", got)
		}
	case opRelease:
		if got, _ := read(call{kind: opReadLease, owner: c.token.OwnerID}).(location.OwnerLeaseReadResult); got.Kind != location.KindMissing {
			return fmt.Sprintf("%+v", got)
		}
	case opReserve, opCommit, opAbort, opCAS:
		key := c.authKey
		var want *location.AuthoritySnapshot
		switch res := w.res.(type) {
		case location.ReserveResult:
			key, want = location.AuthorityKey(authKeyOf(c.reserve.Key)), res.Creating
		case location.CommitResult:
			key, want = location.AuthorityKey(authKeyOf(c.commit.Key)), res.Ready
		case location.CompareExchangeResult:
			want = res.Stored
		case location.ResultKind:
			key = location.AuthorityKey(authKeyOf(c.abort.Key))
		}
		got, _ := read(call{kind: opReadAuthority, authKey: key}).(location.AuthorityReadResult)
		switch {
		case want == nil && got.Kind != location.KindMissing:
			return fmt.Sprintf("%+v", got.Snapshot)
		case want != nil && (got.Snapshot == nil || got.Snapshot.StoreVersion != want.StoreVersion):
			return fmt.Sprintf("%+v", got.Snapshot)
		}
	}
	return ""
}

// fencedOwner returns the owner whose lease a successful call relied on,
// or "" for calls that do not need a live lease to succeed.
func fencedOwner(r *record) string {
	if r.err != nil {
		return ""
	}
	switch res := r.res.(type) {
	case location.WriteResult:
		// Spot and actor rows do not check the writer's lease (anomaly
		// A-11, reproduced by both stores): only descriptors are fenced.
		if res.Status == location.Stored && r.c.kind == opUpdateMeshNode {
			return r.c.desc.OwnerID
		}
	case location.OwnerLeaseRenewResult:
		if res.Kind == location.KindRenewed {
			return r.c.token.OwnerID
		}
	case location.ReserveResult:
		if res.Kind == location.KindReserved {
			return r.c.reserve.Target.Owner.OwnerID
		}
	case location.CommitResult:
		if res.Kind == location.KindCommitted {
			return r.c.commit.Target.Owner.OwnerID
		}
	}
	return ""
}

// fencedToken is the token of fencedOwner.
func fencedToken(r *record) location.OwnerToken {
	switch r.c.kind {
	case opUpdateSpot:
		return location.OwnerToken{OwnerID: r.c.spot.OwnerID, LeaseGeneration: r.c.spot.LeaseGeneration}
	case opUpdateMeshNode:
		return r.c.desc.Owner()
	case opRenew:
		return r.c.token
	case opReserve:
		return r.c.reserve.Target.Owner
	case opCommit:
		return r.c.commit.Target.Owner
	}
	return location.OwnerToken{}
}

// checkFenced checks that no write fenced by an owner lease succeeded after
// the lease ended: (1) a commit sent after a fault ended the lease between
// the decision and the commit must fail its guard, and the call must not
// succeed on that lease; (2) no call succeeds on a token whose lease had
// ended (released, expired or revoked) before the call started.
func (h *harness) checkFenced(records []*record) {
	fail := func(format string, args ...any) {
		h.mu.Lock()
		h.report.fenced++
		h.mu.Unlock()
		h.violation(format, args...)
	}
	for _, r := range records {
		if r.fenced == "" {
			continue
		}
		if r.fencedCommitted {
			fail("fenced write: %v committed after the lease of %s ended before its commit", r.c, r.fenced)
		}
		if owner, ok := h.layout.OwnerIDOfKey(r.fenced); ok && fencedOwner(r) == owner {
			fail("fenced write: %v succeeded (%+v) although the lease of %s ended before its commit", r.c, r.res, owner)
		}
	}
	// When each token's lease was known to have ended.
	ended := map[location.OwnerToken]int64{}
	note := func(t location.OwnerToken, at int64) {
		if prev, ok := ended[t]; !ok || at < prev {
			ended[t] = at
		}
	}
	claims := map[location.OwnerToken]*record{}
	for _, r := range records {
		if res, ok := r.res.(location.OwnerLeaseClaimResult); ok && r.err == nil && res.Kind == location.KindClaimed {
			claims[res.Token] = r
		}
	}
	for _, r := range records {
		if r.err != nil {
			continue
		}
		switch r.c.kind {
		case opRelease:
			if r.res == location.KindReleased {
				note(r.c.token, r.end)
			}
		case opExpireGen:
			note(r.c.token, r.end)
		case opExpire:
			// The revoke ended every lease of the owner claimed before it.
			for t, cr := range claims {
				if t.OwnerID == r.c.owner && cr.end < r.start {
					note(t, r.end)
				}
			}
		}
	}
	for _, r := range records {
		if fencedOwner(r) == "" {
			continue
		}
		t := fencedToken(r)
		if at, ok := ended[t]; ok && at < r.start {
			fail("fenced write: %v succeeded (%+v) on %s/%d, whose lease ended at %.3fms, before the call started at %.3fms",
				r.c, r.res, t.OwnerID, t.LeaseGeneration, float64(at)/1e6, float64(r.start)/1e6)
		}
	}
}

// envelope is the part of a stored value the checks read.
type envelope struct {
	Value json.RawMessage `json:"value"`
}

// checkLedgers checks the capacity ledgers: every bucket is non-negative,
// every listed descriptor's usage was non-negative during the run, and at
// the end each node's active and reserved usage equals the sum of the
// allocations of the authority records placed on it.
func (h *harness) checkLedgers(ctx context.Context, records []*record) {
	for _, r := range records {
		page, ok := r.res.(location.Page[location.MeshNodeDescriptor])
		if !ok || r.err != nil {
			continue
		}
		for _, d := range page.Items {
			p := d.PopulationCapacity
			caps := []location.PopulationCapacity{p.Actors, p.Spots}
			for _, st := range p.SpotTypes {
				caps = append(caps, st.PopulationCapacity)
			}
			for _, c := range caps {
				if c.Active < 0 || c.Reserved < 0 {
					h.violation("ledger: %v listed %s with negative usage %+v", r.c, d.RID, c)
				}
			}
		}
	}
	resp, err := h.raw.Get(ctx, h.layout.TablePrefix(string(rules.TableLedger)), clientv3.WithPrefix())
	if err != nil {
		h.violation("ledger: read: %v", err)
		return
	}
	for _, kv := range resp.Kvs {
		var env envelope
		var e rules.LedgerEntry
		if err := json.Unmarshal(kv.Value, &env); err != nil || json.Unmarshal(env.Value, &e) != nil {
			h.violation("ledger: undecodable bucket %s", kv.Key)
			continue
		}
		if e.Active < 0 || e.Reserved < 0 {
			h.violation("ledger: bucket %s is negative: %+v", kv.Key, e)
		}
	}
	final := h.finalRecords()
	nodes, _ := final[call{kind: opListMeshNodes, mesh: workloadMesh}.String()].res.(location.Page[location.MeshNodeDescriptor])
	scan, _ := final[call{kind: opListAuthority}.String()].res.(location.AuthorityScanResult)
	type usage struct{ active, reserved int64 }
	want := map[location.RoutingID]usage{}
	for _, e := range scan.Items {
		a := e.Snapshot.Allocation
		u := want[a.Descriptor.RID]
		if a.State == location.AllocationActive {
			u.active += a.Capacity.Spots
		} else {
			u.reserved += a.Capacity.Spots
		}
		want[a.Descriptor.RID] = u
	}
	for _, d := range nodes.Items {
		got := usage{d.PopulationCapacity.Spots.Active, d.PopulationCapacity.Spots.Reserved}
		if got != want[d.RID] {
			h.violation("ledger: node %s uses %+v spots, its allocations add up to %+v", d.RID, got, want[d.RID])
		}
		for _, st := range d.PopulationCapacity.SpotTypes {
			if got := (usage{st.Active, st.Reserved}); got != want[d.RID] {
				h.violation("ledger: node %s uses %+v %s, its allocations add up to %+v", d.RID, got, st.StableType, want[d.RID])
			}
		}
	}
}

// checkOwnerIndex checks that every authority record and spot row has
// exactly one owner-index entry, under its owner, and that no entry names a
// record or row that does not exist: at most one owner per record.
func (h *harness) checkOwnerIndex(ctx context.Context) {
	resp, err := h.raw.Get(ctx, h.layout.ByOwnerPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		h.violation("owner index: read: %v", err)
		return
	}
	owners := map[string][]string{}
	for _, kv := range resp.Kvs {
		owner, table, key, ok := h.layout.SplitOwnerIndexKey(string(kv.Key))
		if !ok {
			h.violation("owner index: undecodable key %q", kv.Key)
			continue
		}
		if table == string(rules.TableAuthority) || table == string(location.TableSpots) {
			owners[table+" "+key] = append(owners[table+" "+key], owner)
		}
	}
	want := map[string]string{}
	final := h.finalRecords()
	scan, _ := final[call{kind: opListAuthority}.String()].res.(location.AuthorityScanResult)
	for _, e := range scan.Items {
		want[string(rules.TableAuthority)+" "+string(e.Key)] = e.Snapshot.Owner.OwnerID
	}
	spots, _ := final[call{kind: opListSpots, mesh: spotMesh}.String()].res.(location.Page[location.SpotLocation])
	for _, s := range spots.Items {
		want[string(location.TableSpots)+" "+rules.SpotKey(s.Key())] = s.OwnerID
	}
	for k, o := range want {
		if got := owners[k]; len(got) != 1 || got[0] != o {
			h.violation("owner index: %s is held by %s but indexed under %v", k, o, got)
		}
	}
	for k, got := range owners {
		if _, ok := want[k]; !ok {
			h.violation("owner index: %s does not exist but is indexed under %v", k, got)
		}
	}
}
