package conformance

import (
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Random operations on actor transfers. Recovery leases are short (a few
// seconds) and follow the fake clock on every store, so clock steps make
// them expire.

// randomSlots are the transfer slots.
func randomSlots() []location.ActorKey {
	return []location.ActorKey{{MeshName: "m1", ActorID: "x1"}, {MeshName: "m1", ActorID: "x2"}}
}

// randomRecoveryOwners are the recovery owners.
func randomRecoveryOwners() []string { return []string{"rec-a", "rec-b"} }

// transferRefSpec is a symbolic transfer reference.
type transferRefSpec struct {
	slot, id int
	// corrupt: 1 an upper-case transfer id, 2 a blank actor id.
	corrupt int
}

// String renders the reference.
func (r transferRefSpec) String() string {
	ref := r.build()
	return fmt.Sprintf("%s/%s/%s", ref.MeshName, ref.ActorID, ref.TransferID)
}

// build returns the reference.
func (r transferRefSpec) build() location.ActorTransferRef {
	s := randomSlots()[r.slot]
	ref := location.ActorTransferRef{MeshName: s.MeshName, ActorID: s.ActorID, TransferID: randomTransferIDs()[r.id]}
	switch r.corrupt {
	case 1:
		ref.TransferID = "0123456789AB-CDEF"
	case 2:
		ref.ActorID = " "
	}
	return ref
}

// transferRefSpec draws a reference.
func (g *generator) transferRefSpec() transferRefSpec {
	r := transferRefSpec{slot: g.n(2), id: g.n(len(randomTransferIDs()))}
	if g.bad() {
		r.corrupt = 1 + g.n(2)
	}
	return r
}

// recoveryTTL draws a recovery-lease TTL of a few seconds.
func (g *generator) recoveryTTL() time.Duration {
	if g.bad() {
		return pick(g, 0, 300*time.Microsecond)
	}
	return pick(g, time.Millisecond, time.Second, 2500*time.Millisecond)
}

// prepareSpec is a symbolic prepare request.
type prepareSpec struct {
	ref          transferRefSpec
	recovery     int
	ttl          time.Duration
	generation   int64
	participants int
}

// String renders the spec.
func (p prepareSpec) String() string {
	return fmt.Sprintf("XFER{%s recovery=%s ttl=%v gen=%d participants=%d}", p.ref, randomRecoveryOwners()[p.recovery], p.ttl, p.generation, p.participants)
}

// build returns the request.
func (p prepareSpec) build() location.ActorTransferPrepareRequest {
	ref := p.ref.build()
	parts := [][]location.RoutingID{{"node-a", "node-b"}, {"node-b", "node-a", "node-b"}, {}}[p.participants]
	return location.ActorTransferPrepareRequest{
		MeshName:                ref.MeshName,
		ActorID:                 ref.ActorID,
		TransferID:              ref.TransferID,
		Source:                  location.ActorRef{ActorID: ref.ActorID, ObjectGeneration: 11, MeshName: ref.MeshName, NodeRID: "node-a"},
		Target:                  location.ActorRef{ActorID: ref.ActorID, ObjectGeneration: 11, MeshName: ref.MeshName, NodeRID: "node-b"},
		ExpectedActorGeneration: p.generation,
		ExpectedMembershipEpoch: 4,
		Participants:            parts,
		RecoveryOwnerID:         randomRecoveryOwners()[p.recovery],
		RecoveryLeaseTTL:        p.ttl,
	}
}

func genPrepareTransfer(g *generator) randomOp {
	p := prepareSpec{ref: g.transferRefSpec(), recovery: g.n(2), ttl: g.recoveryTTL(), generation: 11, participants: g.n(2)}
	if g.bad() {
		if g.chance(0.5) {
			p.generation = 0
		} else {
			p.participants = 2
		}
	}
	return prepareTransferOp(p)
}

// prepareTransferOp is PrepareActorTransfer(request).
func prepareTransferOp(p prepareSpec) randomOp {
	return randomOp{name: "PrepareActorTransfer", args: func() string { return p.String() }, run: func(x *runState) {
		req := p.build()
		x.inputs(req)
		m, s, ok := both(x, func(sd side) (location.ActorTransferWriteResult, error) {
			return sd.store.PrepareActorTransfer(x.ctx, req)
		})
		if ok {
			x.transferResult("", m, s)
			x.learnTransfer(m)
		}
	}}
}

// transitionSpec is a symbolic commit, activate or abort of a transfer;
// last names the transfer last stored and its recovery owner.
type transitionSpec struct {
	ref      transferRefSpec
	recovery int
	last     bool
}

// String renders the spec.
func (t transitionSpec) String() string {
	return lastArgs(t.last, fmt.Sprintf("%s, %s", t.ref, randomRecoveryOwners()[t.recovery]))
}

// transitionSpec draws a transition.
func (g *generator) transitionSpec() transitionSpec {
	return transitionSpec{ref: g.transferRefSpec(), recovery: g.n(2), last: g.chance(0.6)}
}

// learnTransfer records a stored transfer record.
func (x *runState) learnTransfer(m location.ActorTransferWriteResult) {
	if x.ok() && m.Status == location.TransferStored && m.Record != nil {
		c := *m.Record
		x.know.lastTransfer = &c
	}
}

// lastTransferRef returns the reference and recovery owner of the transfer
// last stored.
func (k *knowledge) lastTransferRef() (location.ActorTransferRef, string, bool) {
	r := k.lastTransfer
	if r == nil {
		return location.ActorTransferRef{}, "", false
	}
	return location.ActorTransferRef{MeshName: r.MeshName, ActorID: r.ActorID, TransferID: r.TransferID}, r.RecoveryOwnerID, true
}

// transferTransitionOp runs one of the three transitions.
func transferTransitionOp(name string, t transitionSpec, call func(x *runState, s location.Store, ref location.ActorTransferRef, recovery string) (location.ActorTransferWriteResult, error)) randomOp {
	return randomOp{name: name, args: func() string { return t.String() }, run: func(x *runState) {
		ref := t.ref.build()
		recovery := randomRecoveryOwners()[t.recovery]
		if lr, lrec, ok := x.know.lastTransferRef(); t.last && ok {
			ref, recovery = lr, lrec
		}
		x.inputs(ref, recovery)
		m, s, ok := both(x, func(sd side) (location.ActorTransferWriteResult, error) {
			return call(x, sd.store, ref, recovery)
		})
		if ok {
			x.transferResult("", m, s)
			x.learnTransfer(m)
		}
	}}
}

func genCommitTransfer(g *generator) randomOp {
	return transferTransitionOp("CommitActorTransfer", g.transitionSpec(), func(x *runState, s location.Store, ref location.ActorTransferRef, recovery string) (location.ActorTransferWriteResult, error) {
		return s.CommitActorTransfer(x.ctx, ref, recovery)
	})
}

func genActivateTransfer(g *generator) randomOp {
	return transferTransitionOp("ActivateActorTransfer", g.transitionSpec(), func(x *runState, s location.Store, ref location.ActorTransferRef, recovery string) (location.ActorTransferWriteResult, error) {
		return s.ActivateActorTransfer(x.ctx, ref, recovery)
	})
}

func genAbortTransfer(g *generator) randomOp {
	return transferTransitionOp("AbortActorTransfer", g.transitionSpec(), func(x *runState, s location.Store, ref location.ActorTransferRef, recovery string) (location.ActorTransferWriteResult, error) {
		return s.AbortActorTransfer(x.ctx, ref, recovery)
	})
}

func genTakeOverTransfer(g *generator) randomOp {
	successor := pick(g, "rec-a", "rec-b", "rec-c")
	if g.bad() {
		successor = ""
	}
	return takeOverOp(g.transferRefSpec(), successor, g.recoveryTTL(), g.chance(0.6))
}

// takeOverOp is TakeOverActorTransfer(ref, successor, ttl); last names the
// transfer last stored.
func takeOverOp(r transferRefSpec, successor string, ttl time.Duration, last bool) randomOp {
	return randomOp{name: "TakeOverActorTransfer", args: func() string { return lastArgs(last, fmt.Sprintf("%s, %q, %v", r, successor, ttl)) }, run: func(x *runState) {
		ref := r.build()
		if lr, _, ok := x.know.lastTransferRef(); last && ok {
			ref = lr
		}
		x.inputs(ref, successor, ttl)
		m, s, ok := both(x, func(sd side) (location.ActorTransferWriteResult, error) {
			return sd.store.TakeOverActorTransfer(x.ctx, ref, successor, ttl)
		})
		if ok {
			x.transferResult("", m, s)
			x.learnTransfer(m)
		}
	}}
}

func genResolveTransfer(g *generator) randomOp {
	slot := randomSlots()[g.n(2)]
	if g.chance(0.1) {
		slot.ActorID = "x9"
	}
	return resolveTransferOp(slot)
}

// resolveTransferOp is ResolveActorTransfer(mesh, actor).
func resolveTransferOp(slot location.ActorKey) randomOp {
	return randomOp{name: "ResolveActorTransfer", args: func() string { return slot.MeshName + "/" + slot.ActorID }, run: func(x *runState) {
		x.inputs(slot)
		m, s, ok := both(x, func(sd side) (*location.ActorTransferRecord, error) {
			return sd.store.ResolveActorTransfer(x.ctx, slot.MeshName, slot.ActorID)
		})
		if ok {
			x.same("record", m, s)
		}
	}}
}
