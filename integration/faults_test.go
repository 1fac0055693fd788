package integration

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// faultType names a fault.
type faultType string

// The faults (docs/reliability.md describes each).
const (
	faultLeaderKill    faultType = "leader-kill"
	faultMemberRestart faultType = "member-restart"
	faultPartition     faultType = "partition"
	faultLostResponses faultType = "lost-responses"
	faultCancel        faultType = "cancelled-calls"
	faultCompaction    faultType = "compaction-during-scans"
	faultLeaseRevoke   faultType = "lease-revoked-before-commit"
	faultLeaseExpiry   faultType = "lease-expired-before-commit"
)

// allFaults lists every fault type.
func allFaults() []faultType {
	return []faultType{faultLeaderKill, faultMemberRestart, faultPartition, faultLostResponses,
		faultCancel, faultCompaction, faultLeaseRevoke, faultLeaseExpiry}
}

// The owner of the lease-expiry fault and its mesh node (outside the
// workload's universe, so that only the fault's calls touch them). The
// fault writes a descriptor: descriptor writes check the writer's lease,
// spot rows do not (anomaly A-11).
const (
	ttlOwner = "o9"
	ttlRID   = "n9"
)

// ttlNode is the lease-expiry fault's descriptor.
func ttlNode(tok location.OwnerToken) location.MeshNodeDescriptor {
	d := meshNode(0, tok, 1, location.StateServing)
	d.RID = ttlRID
	return d
}

// faultHold is how long a fault lasts (a member down, a blackhole, a window
// of lost responses or cancelled calls).
const faultHold = 600 * time.Millisecond

// wait waits d or until ctx ends.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// injectFaults injects the history's faults one after the other while the
// workload runs.
func (h *harness) injectFaults(ctx context.Context) {
	for _, f := range h.cfg.faults {
		wait(ctx, time.Duration(100+h.rnd.IntN(300))*time.Millisecond)
		if ctx.Err() != nil {
			return
		}
		ok := h.inject(ctx, f)
		h.mu.Lock()
		if ok {
			h.report.faults[f]++
		} else {
			h.report.faultsMissed++
		}
		h.mu.Unlock()
	}
}

// inject injects one fault; it reports whether the fault happened.
func (h *harness) inject(ctx context.Context, f faultType) bool {
	switch f {
	case faultLeaderKill:
		i := h.tc.leader()
		if i < 0 {
			return false
		}
		return h.restartMember(ctx, i, true)
	case faultMemberRestart:
		i := h.rnd.IntN(len(h.tc.cl.Members))
		if i == h.tc.leader() {
			i = (i + 1) % len(h.tc.cl.Members)
		}
		return h.restartMember(ctx, i, false)
	case faultPartition:
		// The bridge holds the traffic back in both directions, as a
		// network partition does to a TCP connection (its segments are
		// retransmitted, in order, once it heals, unless the client's
		// keep-alive gives up on it first). It does not blackhole it: a
		// blackhole on a live connection drops bytes from the middle of
		// the stream, which TCP never does, and so may drop whole HTTP/2
		// frames unnoticed, such as a watch event (docs/reliability.md).
		b := h.tc.bridges[h.rnd.IntN(len(h.tc.bridges))]
		b.PauseTx()
		b.PauseRx()
		wait(ctx, faultHold)
		b.UnpauseTx()
		b.UnpauseRx()
		return true
	case faultLostResponses:
		for _, w := range h.workers {
			w.kv.setLoss(0.35, 0.1)
		}
		wait(ctx, faultHold)
		for _, w := range h.workers {
			w.kv.setLoss(0, 0)
		}
		return true
	case faultCancel:
		h.cancel.Store(true)
		wait(ctx, faultHold)
		h.cancel.Store(false)
		return true
	case faultCompaction:
		return h.compactDuringScans(ctx)
	case faultLeaseRevoke:
		return h.revokeBeforeCommit(ctx)
	case faultLeaseExpiry:
		return h.expireBeforeCommit(ctx)
	}
	return false
}

// restartMember stops member i (a kill when hard) and restarts it.
func (h *harness) restartMember(ctx context.Context, i int, hard bool) bool {
	m := h.tc.cl.Members[i]
	h.tc.down[i] = true
	m.Stop(hard)
	wait(ctx, faultHold/2)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := m.Restart(rctx); err != nil {
		h.violation("restart of %s failed: %v", m.Name(), err)
		return false
	}
	h.tc.down[i] = false
	return true
}

// bumpAndCompact writes a key outside the store's root (so that the
// revision moves past anything a list pinned) and compacts the whole
// history up to the current revision.
func (h *harness) bumpAndCompact(ctx context.Context) error {
	resp, err := h.raw.Put(ctx, "/integration-bump/"+h.root, "x")
	if err != nil {
		return err
	}
	_, err = h.raw.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical())
	return err
}

// compactDuringScans compacts between the pages of a paged spot list and
// of an authority scan: the next page must report the expired snapshot.
// It reports whether at least one of the two scans had a second page.
func (h *harness) compactDuringScans(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	mesh := spotMesh
	checked := false
	for attempt := 0; attempt < 20 && !checked; attempt++ {
		p1, err := h.side.ListSpots(cctx, location.SpotFilter{MeshName: &mesh}, location.PageRequest{PageSize: 1})
		if err == nil && p1.ContinuationToken != "" {
			if err := h.bumpAndCompact(cctx); err != nil {
				return false
			}
			_, err := h.side.ListSpots(cctx, location.SpotFilter{MeshName: &mesh},
				location.PageRequest{PageSize: 1, ContinuationToken: p1.ContinuationToken})
			if !isScanExpired(err) {
				h.violation("compaction: the next page of a spot list after its snapshot was compacted answered %v, want ErrScanExpired", err)
			}
			checked = true
			h.mu.Lock()
			h.report.scanChecks++
			h.mu.Unlock()
		}
		a1, err := h.side.ListAuthorities(cctx, "", "", 1)
		if err == nil && a1.Kind == location.KindPage && a1.NextCursor != "" {
			if err := h.bumpAndCompact(cctx); err != nil {
				return false
			}
			a2, err := h.side.ListAuthorities(cctx, "", a1.NextCursor, 1)
			if err != nil || a2.Kind != location.KindScanExpired {
				h.violation("compaction: the next page of an authority scan after its snapshot was compacted answered %v %v, want scanExpired", a2.Kind, err)
			}
			checked = true
			h.mu.Lock()
			h.report.scanChecks++
			h.mu.Unlock()
		}
		if !checked {
			wait(cctx, 100*time.Millisecond)
		}
	}
	return checked
}

// revokeBeforeCommit arms one worker: its next write that asserts a live
// owner lease gets that lease revoked after the decision and before the
// commit (recorded as the injector's ExpireOwnerLease call, followed by a
// read of the lease). The write must not succeed (checkFenced).
func (h *harness) revokeBeforeCommit(ctx context.Context) bool {
	w := h.workers[h.rnd.IntN(len(h.workers))]
	fired := make(chan struct{})
	w.kv.arm(func(ownerKey string) {
		defer close(fired)
		owner, ok := h.layout.OwnerIDOfKey(ownerKey)
		if !ok {
			return
		}
		c := call{kind: opExpire, owner: owner}
		h.hist.do(ctx, h.ghost, c, func(ctx context.Context) (any, error) {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return c.run(cctx, h.side, leaseHooks{expire: h.side.ExpireOwnerLease})
		})
		rc := call{kind: opReadLease, owner: owner}
		h.hist.do(ctx, h.ghost, rc, func(ctx context.Context) (any, error) {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return rc.run(cctx, h.side, leaseHooks{})
		})
	})
	t := time.NewTimer(3 * time.Second)
	defer t.Stop()
	select {
	case <-fired:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	w.kv.arm(nil)
	select {
	case <-fired: // fired while disarming
		return true
	default:
		return false
	}
}

// expireBeforeCommit lets an owner lease run out between a write's
// decision and its commit: the injector claims ttlOwner for one second on
// a store that does not raise etcd TTLs, writes its descriptor with it,
// and holds the commit until etcd has dropped the owner key. The lease's
// end is recorded as an event between one TTL after the claim started and
// the moment the key was seen gone; the model lets it end the lease only
// while that lease is the owner's. The write must not succeed
// (checkFenced).
func (h *harness) expireBeforeCommit(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	kv := newFaultKV(h.raw.KV, h.layout.OwnerPrefix(), h.cfg.seed)
	st, err := h.newStore(h.raw, kv, 0)
	if err != nil {
		return false
	}
	claim := call{kind: opClaim, owner: ttlOwner, ttl: time.Second}
	cr := h.hist.do(cctx, h.ghost, claim, func(ctx context.Context) (any, error) {
		return claim.run(ctx, st, leaseHooks{})
	})
	res, ok := cr.res.(location.OwnerLeaseClaimResult)
	if cr.err != nil || !ok || res.Kind != location.KindClaimed {
		return false
	}
	ownerKey := h.layout.OwnerKey(ttlOwner)
	var gone int64
	kv.arm(func(string) {
		for cctx.Err() == nil {
			resp, err := h.raw.Get(cctx, ownerKey, clientv3.WithCountOnly())
			if err == nil && resp.Count == 0 {
				gone = h.hist.now()
				return
			}
			wait(cctx, 20*time.Millisecond)
		}
	})
	write := call{kind: opUpdateMeshNode, desc: ttlNode(res.Token), intent: location.IntentNewClaim}
	wr := h.hist.do(cctx, h.ghost, write, func(ctx context.Context) (any, error) {
		return write.run(ctx, st, leaseHooks{})
	})
	wr.fenced, wr.fencedCommitted = kv.takeFired()
	if gone == 0 {
		// The key outlived the wait: the lease ends at some unknown time.
		gone = 1<<62 - 1
	}
	// etcd ends the lease at the earliest one TTL after granting it, and
	// it granted it after the claim started (a little margin for clock
	// granularity).
	earliest := cr.start + int64(claim.ttl) - int64(50*time.Millisecond)
	if earliest > gone {
		earliest = cr.start
	}
	h.hist.add(&record{client: h.ghost, c: call{kind: opExpireGen, token: res.Token}, start: earliest, end: gone,
		res: location.KindFound})
	if wr.fenced == "" && wr.err == nil {
		// Owner o9 was live and its descriptor absent: the write had to
		// commit.
		h.violation("lease expiry: the write %v answered %+v without reaching its commit", write, wr.res)
	}
	return wr.fenced != "" && gone < 1<<62-1
}
