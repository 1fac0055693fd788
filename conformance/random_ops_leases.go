package conformance

import (
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Random operations on owner leases, the harness (lease expiry, clock
// steps), RemoveAllByOwner and change stamps.

// leaseOwnerText draws an owner id for the lease methods, rarely an invalid
// one (empty, blank).
func (g *generator) leaseOwnerText() string {
	if g.bad() {
		return pick(g, "", "  \t", "\xff")
	}
	return randomOwners()[g.ownerIndex()]
}

// leaseTTL draws a claim or renewal TTL: long ones (a sequence never
// reaches them on the clock), rarely an invalid one.
func (g *generator) leaseTTL() time.Duration {
	if g.bad() {
		return pick(g, 0, 500*time.Microsecond, -time.Second)
	}
	return pick(g, randomClaimTTL, randomClaimTTL+2*time.Minute+7*time.Millisecond)
}

func genClaim(g *generator) randomOp { return claimOp(g.leaseOwnerText(), g.leaseTTL()) }

// claimOp is ClaimOwnerLease(owner, ttl).
func claimOp(owner string, ttl time.Duration) randomOp {
	return randomOp{name: "ClaimOwnerLease", args: func() string { return fmt.Sprintf("%q, %v", owner, ttl) }, run: func(x *runState) {
		x.inputs(owner, ttl)
		m, s, ok := both(x, func(sd side) (location.OwnerLeaseClaimResult, error) {
			return sd.store.ClaimOwnerLease(x.ctx, owner, ttl)
		})
		if !ok {
			return
		}
		// A claim answers what a read would: the same fields.
		x.leaseView(location.OwnerLeaseReadResult(m), location.OwnerLeaseReadResult(s))
		if x.ok() && m.Kind == location.KindClaimed {
			x.know.learnLease(m.Token)
		}
	}}
}

func genReadLease(g *generator) randomOp { return readLeaseOp(g.leaseOwnerText()) }

// readLeaseOp is ReadOwnerLease(owner).
func readLeaseOp(owner string) randomOp {
	return randomOp{name: "ReadOwnerLease", args: func() string { return fmt.Sprintf("%q", owner) }, run: func(x *runState) {
		x.inputs(owner)
		x.readLease(owner)
	}}
}

// readLease reads owner's lease on both stores and compares.
func (x *runState) readLease(owner string) {
	m, s, ok := both(x, func(sd side) (location.OwnerLeaseReadResult, error) {
		return sd.store.ReadOwnerLease(x.ctx, owner)
	})
	if ok {
		x.leaseView(m, s)
	}
}

// leaseView compares two answers about an owner lease.
func (x *runState) leaseView(m, s location.OwnerLeaseReadResult) {
	x.kind(".Kind", m.Kind, s.Kind)
	x.ownerToken(".Token", m.Token, s.Token)
	x.instant(".LeaseExpiresAt", m.LeaseExpiresAt, s.LeaseExpiresAt)
	x.instant(".StoreNow", m.StoreNow, s.StoreNow)
}

func genRenew(g *generator) randomOp {
	t := g.tokenRef()
	invalidOwner := ""
	if g.bad() {
		invalidOwner = " "
	}
	return renewOp(t, invalidOwner, g.leaseTTL())
}

// renewOp is RenewOwnerLease(token, ttl); a non-empty invalidOwner replaces
// the token's owner id.
func renewOp(t tokenRef, invalidOwner string, ttl time.Duration) randomOp {
	args := fmt.Sprintf("%s, %v", t, ttl)
	if invalidOwner != "" {
		args = fmt.Sprintf("%s with owner %q, %v", t, invalidOwner, ttl)
	}
	return randomOp{name: "RenewOwnerLease", args: func() string { return args }, run: func(x *runState) {
		tok := t.resolve(x.know)
		if invalidOwner != "" {
			tok.OwnerID = invalidOwner
		}
		x.inputs(tok, ttl)
		m, s, ok := both(x, func(sd side) (location.OwnerLeaseRenewResult, error) {
			return sd.store.RenewOwnerLease(x.ctx, sd.token(tok), ttl)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.instant(".LeaseExpiresAt", m.LeaseExpiresAt, s.LeaseExpiresAt)
		x.instant(".StoreNow", m.StoreNow, s.StoreNow)
	}}
}

func genRelease(g *generator) randomOp { return releaseOp(g.tokenRef()) }

// releaseOp is ReleaseOwnerLease(token).
func releaseOp(t tokenRef) randomOp {
	return randomOp{name: "ReleaseOwnerLease", args: func() string { return t.String() }, run: func(x *runState) {
		tok := t.resolve(x.know)
		x.inputs(tok)
		m, s, ok := both(x, func(sd side) (location.ResultKind, error) {
			return sd.store.ReleaseOwnerLease(x.ctx, sd.token(tok))
		})
		if ok {
			x.kind("", m, s)
		}
	}}
}

func genExpire(g *generator) randomOp {
	// A store without in-memory semantics drops an expired lease at once; the
	// model keeps an expired entry until it is read, so the read
	// follows the expiry there. With in-memory semantics it follows
	// sometimes.
	return expireOp(g.ownerIndex(), !g.caps.InMemorySemantics || g.chance(0.5))
}

// expireOp is the harness's ExpireOwnerLease(owner), then maybe a
// ReadOwnerLease of the owner.
func expireOp(owner int, thenRead bool) randomOp {
	id := randomOwners()[owner]
	args := fmt.Sprintf("%q", id)
	if thenRead {
		args += ", then ReadOwnerLease"
	}
	return randomOp{name: "ExpireOwnerLease", args: func() string { return args }, run: func(x *runState) {
		x.inputs(id)
		if x.sut.ExpireOwnerLease == nil {
			x.fail(ruleHarness, "the harness's fixture has no ExpireOwnerLease hook")
			return
		}
		me := x.model.ExpireOwnerLease(x.ctx, id)
		se := x.sut.ExpireOwnerLease(x.ctx, id)
		x.modelErr, x.storeErr = me, se
		if (me == nil) != (se == nil) {
			x.fail(ruleHarness, "ExpireOwnerLease(%q): model error %v, store error %v", id, me, se)
			return
		}
		if thenRead {
			x.readLease(id)
		}
	}}
}

func genClockStep(g *generator) randomOp {
	d := pick(g, time.Millisecond, 7*time.Millisecond, 250*time.Millisecond, time.Second, 2*time.Second, 3*time.Second)
	if d > g.clockLeft {
		d = time.Millisecond
	}
	g.clockLeft -= d
	return clockStepOp(d)
}

// clockStepOp advances both clocks by d.
func clockStepOp(d time.Duration) randomOp {
	return randomOp{name: "Clock.Advance", args: func() string { return d.String() }, run: func(x *runState) {
		x.model.Clock.Advance(d)
		x.sut.Clock.Advance(d)
		if m, s := x.model.Clock.Now(), x.sut.Clock.Now(); !m.Equal(s) {
			x.fail(ruleHarness, "the clocks disagree after the step: model %s, store %s", fmtTime(m), fmtTime(s))
		}
	}}
}

func genRemoveAllByOwner(g *generator) randomOp { return removeAllOp(g.tokenRef()) }

// removeAllOp is RemoveAllByOwner(token).
func removeAllOp(t tokenRef) randomOp {
	return randomOp{name: "RemoveAllByOwner", args: func() string { return t.String() }, run: func(x *runState) {
		tok := t.resolve(x.know)
		x.inputs(tok)
		m, s, ok := both(x, func(sd side) (int64, error) {
			return sd.store.RemoveAllByOwner(x.ctx, sd.token(tok))
		})
		if !ok {
			return
		}
		if m != s {
			x.fail(ruleField, "removed: model %d, store %d", m, s)
			return
		}
		if m > 0 {
			x.probeMeshNodes()
		}
	}}
}

// probeMeshNodes re-reads the model's mesh nodes after a bulk removal so
// that the next write to a removed key starts a new incarnation. It reads
// the model only (reads do not change memstore).
func (x *runState) probeMeshNodes() {
	for key, live := range x.know.nodeLive {
		if !live {
			continue
		}
		p, err := x.model.Store.ListMeshNodes(x.ctx, key.MeshName, location.PageRequest{})
		if err != nil {
			continue
		}
		found := false
		for _, d := range p.Items {
			found = found || d.RID == key.RID
		}
		x.know.nodeLive[key] = found
	}
}

// stampKinds are the scope kinds the random stamp reads draw from.
func randomStampKinds() []location.ScopeKind {
	return append(stampKinds(), "bogus")
}

func genChangeStamp(g *generator) randomOp {
	kind := pick(g, randomStampKinds()...)
	var mesh, channel *string
	switch g.n(4) {
	case 0:
	case 1:
		m := ""
		mesh = &m
	default:
		m := pick(g, "m1", "m2", "c1", "c2")
		mesh = &m
	}
	if g.chance(0.1) {
		c := pick(g, "c1", "m1")
		channel = &c
	}
	return changeStampOp(location.ChangeStampScope{Kind: kind, MeshName: mesh, ChannelName: channel})
}

// changeStampOp is GetChangeStamp(scope).
func changeStampOp(scope location.ChangeStampScope) randomOp {
	mesh := ""
	if scope.MeshName != nil {
		mesh = *scope.MeshName
	}
	args := fmt.Sprintf("%s, mesh %q", scope.Kind, mesh)
	if scope.MeshName == nil {
		args = fmt.Sprintf("%s, no mesh", scope.Kind)
	}
	if scope.ChannelName != nil {
		args += fmt.Sprintf(", channel %q", *scope.ChannelName)
	}
	return randomOp{name: "GetChangeStamp", args: func() string { return args }, run: func(x *runState) {
		x.inputs(scope)
		m, s, ok := both(x, func(sd side) (int64, error) { return sd.store.GetChangeStamp(x.ctx, scope) })
		if ok {
			x.stamp(stampScope{Kind: scope.Kind, Mesh: mesh}.String(), m, s)
		}
	}}
}

func genMeshNodeChangeStamp(g *generator) randomOp {
	return meshNodeStampOp(pick(g, "m1", "m2", "zz"))
}

// stampReading is the outcome of GetMeshNodeChangeStamp.
type stampReading struct {
	Stamp int64
	OK    bool
}

// meshNodeStampOp is GetMeshNodeChangeStamp(mesh) (stores that declare
// the capability).
func meshNodeStampOp(mesh string) randomOp {
	return randomOp{name: "GetMeshNodeChangeStamp", args: func() string { return fmt.Sprintf("%q", mesh) }, run: func(x *runState) {
		x.inputs(mesh)
		m, s, ok := both(x, func(sd side) (stampReading, error) {
			st, isStamper := sd.store.(location.MeshNodeChangeStamper)
			if !isStamper {
				return stampReading{}, fmt.Errorf("the store does not implement location.MeshNodeChangeStamper: %w", location.ErrUnsupported)
			}
			v, ok, err := st.GetMeshNodeChangeStamp(x.ctx, mesh)
			return stampReading{Stamp: v, OK: ok}, err
		})
		if !ok {
			return
		}
		if m.OK != s.OK {
			x.fail(ruleField, ".ok: model %t, store %t", m.OK, s.OK)
			return
		}
		if m.OK {
			x.stamp("meshNodeStamp("+mesh+")", m.Stamp, s.Stamp)
		}
	}}
}
