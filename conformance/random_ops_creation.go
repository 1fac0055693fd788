package conformance

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Random operations on object creation (reserve, commit, complete, abort,
// terminals), relocation capacity and aggregates.

// objectCapacity is the capacity vector an object uses: one actor, or one
// spot of its spot type; variant 1 doubles it, variant 2 mixes actors and
// spots.
func objectCapacity(o randomObject, variant int) location.CapacityVector {
	n := int64(1)
	if variant == 1 {
		n = 2
	}
	var v location.CapacityVector
	if o.kind == location.ObjectActor {
		v = location.CapacityVector{Actors: n}
	} else {
		v = location.CapacityVector{Spots: n, SpotType: &location.SpotTypeDelta{ObjectKind: o.kind, StableType: o.stableType, Count: n}}
	}
	if variant == 2 {
		v.Actors, v.Spots = 1, 1
	}
	return v
}

// reserveSpec is a symbolic Reserve request.
type reserveSpec struct {
	object     int
	wrongType  bool
	target     targetRef
	capVariant int
	// corrupt: 1 a 31-byte digest, 2 an empty capacity, 3 an empty global
	// id, 4 a creating payload over 1 MiB, 5 an unknown object kind.
	corrupt int
}

// String renders the spec.
func (r reserveSpec) String() string {
	out := fmt.Sprintf("%s on %s cap#%d", randomObjects()[r.object], r.target, r.capVariant)
	if r.wrongType {
		out += " wrong-type"
	}
	return out + invalidMark(r.corrupt)
}

// reserveSpec draws a Reserve request.
func (g *generator) reserveSpec() reserveSpec {
	r := reserveSpec{object: g.n(len(randomObjects())), target: g.targetRef()}
	if !g.validOnly {
		r.wrongType = g.chance(0.05)
		r.capVariant = pick(g, 0, 0, 0, 0, 0, 0, 1, 2)
	}
	if g.bad() {
		r.corrupt = 1 + g.n(5)
	}
	return r
}

// build returns the model-side request.
func (r reserveSpec) build(k *knowledge, big func() []byte) location.ReserveRequest {
	o := randomObjects()[r.object]
	stableType := o.stableType
	if r.wrongType {
		stableType = "other"
	}
	req := location.ReserveRequest{
		Key: o.creationKey(),
		Intent: location.CreationIntent{
			StableType:              stableType,
			RequestContentReference: "req:" + o.id,
			RequestSHA256:           bytes.Repeat([]byte{1}, 32),
			RequestEncodedSize:      10,
		},
		Target:          r.target.resolve(k),
		CreatingPayload: []byte("creating"),
		Capacity:        objectCapacity(o, r.capVariant),
	}
	switch r.corrupt {
	case 1:
		req.Intent.RequestSHA256 = req.Intent.RequestSHA256[:31]
	case 2:
		req.Capacity = location.CapacityVector{}
	case 3:
		req.Key.GlobalID = ""
	case 4:
		req.CreatingPayload = big()
	case 5:
		req.Key.Kind = "bogus"
	}
	return req
}

func genReserve(g *generator) randomOp { return reserveOp(g.reserveSpec()) }

// reserveOp is Reserve(request).
func reserveOp(spec reserveSpec) randomOp {
	return randomOp{name: "Reserve", args: func() string { return spec.String() }, run: func(x *runState) {
		req := spec.build(x.know, x.bigPayload)
		key := randomObjects()[spec.object].key()
		x.inputs(req)
		m, s, ok := both(x, func(sd side) (location.ReserveResult, error) {
			c := req
			c.Target = sd.target(c.Target)
			return sd.store.Reserve(x.ctx, c)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.str(NSReservation, ".ReservationID", m.ReservationID, s.ReservationID)
		x.snapshot(".Creating", key, m.Creating, s.Creating)
		x.readResult(".Current", key, m.Current, s.Current)
		if !x.ok() {
			return
		}
		if m.Kind == location.KindReserved {
			x.know.reservations[key] = append(x.know.reservations[key], reservationFact{id: m.ReservationID, target: req.Target})
			x.know.learnSnapshot(key, m.Creating)
		}
		x.know.learnRead(key, m.Current)
	}}
}

// creationTargetSpec is the target a creation step names: its
// reservation's, or another one.
type creationTargetSpec struct {
	own   bool
	other targetRef
}

// String renders the target.
func (c creationTargetSpec) String() string {
	if c.own {
		return "rsv-target"
	}
	return c.other.String()
}

// resolve returns the model-side target.
func (c creationTargetSpec) resolve(k *knowledge, rsv reservationFact) location.CreationTarget {
	if c.own && rsv.target.MeshName != "" {
		return rsv.target
	}
	return c.other.resolve(k)
}

// creationTargetSpec draws a target, mostly the reservation's own.
func (g *generator) creationTargetSpec() creationTargetSpec {
	return creationTargetSpec{own: g.validOnly || g.chance(0.85), other: g.targetRef()}
}

// creationStep is what Commit, CompleteCreation and AbortCreation name: an
// object, one of its reservations, an expected version and a target.
type creationStep struct {
	object      objRef
	reservation reservationRef
	version     versionRef
	target      creationTargetSpec
}

// String renders the step.
func (c creationStep) String() string {
	return fmt.Sprintf("%s, %s, %s, %s", c.object, c.reservation, c.version, c.target)
}

// creationStep draws a step on object.
func (g *generator) creationStep(object objRef) creationStep {
	return creationStep{object: object, reservation: g.reservationRef(), version: g.versionRef(), target: g.creationTargetSpec()}
}

// creationCall is a creation step resolved against the knowledge.
type creationCall struct {
	// key is the object's authority key, object its creation key.
	key     location.AuthorityKey
	object  location.ObjectCreationKey
	rsvID   string
	version location.StoreVersion
	target  location.CreationTarget
}

// resolve returns the model-side step.
func (c creationStep) resolve(k *knowledge) creationCall {
	o := randomObjects()[c.object.resolve(k)]
	key := o.key()
	rsv := c.reservation.resolve(k, key)
	return creationCall{key: key, object: o.creationKey(), rsvID: rsv.id, version: c.version.resolve(k, key), target: c.target.resolve(k, rsv)}
}

// creation translates a creation step's reservation id, expected version
// of key and target, in place.
func (sd side) creation(key location.AuthorityKey, rsvID *string, version *location.StoreVersion, target *location.CreationTarget) {
	*rsvID = sd.reservation(*rsvID)
	*version = sd.version(key, *version)
	*target = sd.target(*target)
}

// runCreation notes req as the operation's input and calls call on both
// sides, each with a copy of req that translate has put in its own names
// (sd.creation: the reservation id, expected version and target).
func runCreation[Req, Res any](x *runState, req Req, call func(location.Store, context.Context, Req) (Res, error), translate func(sd side, c *Req)) (m, s Res, ok bool) {
	x.inputs(req)
	return both(x, func(sd side) (Res, error) {
		c := req
		translate(sd, &c)
		return call(sd.store, x.ctx, c)
	})
}

// learnReady learns the ready snapshot of key a Commit or CompleteCreation
// returned, when both sides agreed so far.
func (x *runState) learnReady(key location.AuthorityKey, ready *location.AuthoritySnapshot) {
	if x.ok() && ready != nil {
		x.know.learnSnapshot(key, ready)
	}
}

// commitSpec is a symbolic Commit request.
type commitSpec struct {
	creationStep
	payload int
	// corrupt: 1 a ready payload over 1 MiB.
	corrupt int
}

// String renders the spec.
func (c commitSpec) String() string {
	return fmt.Sprintf("%s, payload#%d%s", c.creationStep, c.payload, invalidMark(c.corrupt))
}

// commitSpec draws a Commit request.
func (g *generator) commitSpec() commitSpec {
	c := commitSpec{creationStep: g.creationStep(g.objRefOf(objSpots, objReserved, 0.6)), payload: g.n(2)}
	if g.bad() {
		c.corrupt = 1
	}
	return c
}

func genCommit(g *generator) randomOp { return commitOp(g.commitSpec()) }

// commitOp is Commit(request).
func commitOp(spec commitSpec) randomOp {
	return randomOp{name: "Commit", args: func() string { return spec.String() }, run: func(x *runState) {
		step := spec.resolve(x.know)
		req := location.CommitRequest{
			Key:                  step.object,
			ReservationID:        step.rsvID,
			ExpectedStoreVersion: step.version,
			Target:               step.target,
			ReadyPayload:         randomPayload(spec.payload, x.bigPayload),
		}
		if spec.corrupt == 1 {
			req.ReadyPayload = x.bigPayload()
		}
		m, s, ok := runCreation(x, req, location.Store.Commit, func(sd side, c *location.CommitRequest) {
			sd.creation(step.key, &c.ReservationID, &c.ExpectedStoreVersion, &c.Target)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.snapshot(".Ready", step.key, m.Ready, s.Ready)
		x.learnReady(step.key, m.Ready)
	}}
}

// randomOperation is the operation identity OP(n).
func randomOperation(n uint64) location.OperationIdentity {
	return location.OperationIdentity{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: n}}
}

// Deadline choices of a terminal publication, relative to the clock.
const (
	deadlineLater   = iota // now + 60 s
	deadlineSoon           // visible for 2 s more
	deadlineExpired        // the window is already closed (invalid)
)

// deadlineOffset is the deadline's offset from now.
func deadlineOffset(choice int) time.Duration {
	switch choice {
	case deadlineLater:
		return time.Minute
	case deadlineSoon:
		return -location.CreationTerminalRetention + 2*time.Second
	default:
		return -location.CreationTerminalRetention
	}
}

// completeSpec is a symbolic CompleteCreation request.
type completeSpec struct {
	creationStep
	kind     location.TerminalState
	op       uint64
	deadline int
	// corrupt: 1 a wrong digest, 2 an unknown completion kind.
	corrupt int
}

// String renders the spec.
func (c completeSpec) String() string {
	return fmt.Sprintf("%s, %s, OP(%d), deadline#%d%s", c.creationStep, c.kind, c.op, c.deadline, invalidMark(c.corrupt))
}

// completeSpec draws a CompleteCreation request.
func (g *generator) completeSpec() completeSpec {
	c := completeSpec{
		creationStep: g.creationStep(g.objRefOf(objActors, objReserved, 0.6)),
		kind:         pick(g, location.TerminalCreated, location.TerminalCreated, location.TerminalRejected, location.TerminalFailed),
		op:           uint64(1 + g.n(3)),
		deadline:     pick(g, deadlineLater, deadlineLater, deadlineSoon),
	}
	if g.bad() {
		switch g.n(3) {
		case 0:
			c.deadline = deadlineExpired
		default:
			c.corrupt = 1 + g.n(2)
		}
	}
	return c
}

func genCompleteCreation(g *generator) randomOp { return completeOp(g.completeSpec()) }

// completeOp is CompleteCreation(request).
func completeOp(spec completeSpec) randomOp {
	return randomOp{name: "CompleteCreation", args: func() string { return spec.String() }, run: func(x *runState) {
		step := spec.resolve(x.know)
		env := []byte(fmt.Sprintf("env-%d", spec.op))
		digest := sha256.Sum256(env)
		req := location.CompleteCreationRequest{
			Key:                  step.object,
			ReservationID:        step.rsvID,
			ExpectedStoreVersion: step.version,
			Target:               step.target,
			Completion: location.CreationCompletion{
				Kind:         spec.kind,
				ReadyPayload: []byte("ready-actor"),
				Terminal: location.TerminalPublication{
					Operation:              randomOperation(spec.op),
					TerminalEnvelope:       env,
					TerminalEnvelopeSHA256: digest[:],
					OperationDeadline:      location.Millis(x.model.Clock.Now().Add(deadlineOffset(spec.deadline))),
				},
			},
		}
		switch spec.corrupt {
		case 1:
			req.Completion.Terminal.TerminalEnvelopeSHA256 = bytes.Repeat([]byte{9}, 32)
		case 2:
			req.Completion.Kind = "bogus"
		}
		m, s, ok := runCreation(x, req, location.Store.CompleteCreation, func(sd side, c *location.CompleteCreationRequest) {
			sd.creation(step.key, &c.ReservationID, &c.ExpectedStoreVersion, &c.Target)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.snapshot(".Ready", step.key, m.Ready, s.Ready)
		x.terminal(".Terminal", m.Terminal, s.Terminal)
		x.learnReady(step.key, m.Ready)
	}}
}

func genReadTerminal(g *generator) randomOp {
	op := randomOperation(uint64(1 + g.n(3)))
	if g.bad() {
		op.OperationID = location.OperationID{}
	}
	return readTerminalOp(op)
}

// readTerminalOp is ReadCreationTerminal(op).
func readTerminalOp(op location.OperationIdentity) randomOp {
	return randomOp{name: "ReadCreationTerminal", args: func() string { return fmt.Sprintf("OP(%d)", op.OperationID.Low) }, run: func(x *runState) {
		x.inputs(op)
		m, s, ok := both(x, func(sd side) (location.TerminalReadResult, error) {
			return sd.store.ReadCreationTerminal(x.ctx, op)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.terminal(".Record", m.Record, s.Record)
		x.instant(".StoreNow", m.StoreNow, s.StoreNow)
	}}
}

// abortSpec is a symbolic AbortCreation request.
type abortSpec struct {
	creationStep
	// corrupt: 1 an empty global id.
	corrupt int
}

// String renders the spec.
func (a abortSpec) String() string { return a.creationStep.String() + invalidMark(a.corrupt) }

func genAbortCreation(g *generator) randomOp {
	o := objRef{index: g.n(len(randomObjects()))}
	if g.chance(0.6) {
		o.mode = objReserved
	}
	a := abortSpec{creationStep: g.creationStep(o)}
	if g.bad() {
		a.corrupt = 1
	}
	return abortCreationOp(a)
}

// abortCreationOp is AbortCreation(request).
func abortCreationOp(spec abortSpec) randomOp {
	return randomOp{name: "AbortCreation", args: func() string { return spec.String() }, run: func(x *runState) {
		step := spec.resolve(x.know)
		req := location.AbortRequest{Key: step.object, ReservationID: step.rsvID, ExpectedStoreVersion: step.version, Target: step.target}
		if spec.corrupt == 1 {
			req.Key.GlobalID = ""
		}
		m, s, ok := runCreation(x, req, location.Store.AbortCreation, func(sd side, c *location.AbortRequest) {
			sd.creation(step.key, &c.ReservationID, &c.ExpectedStoreVersion, &c.Target)
		})
		if ok {
			x.kind("", m, s)
		}
	}}
}

// relocationSpec is a symbolic ReserveRelocationCapacity request: the
// source is the record as the model last showed it.
type relocationSpec struct {
	id         int
	object     objRef
	version    versionRef
	target     targetRef
	capVariant int
	wrongSrc   bool
	// corrupt: 1 an empty reservation id, 2 an empty capacity.
	corrupt int
}

// String renders the spec.
func (r relocationSpec) String() string {
	out := fmt.Sprintf("%s: %s, %s → %s cap#%d", randomRelocationIDs()[r.id], r.object, r.version, r.target, r.capVariant)
	if r.wrongSrc {
		out += " wrong-source"
	}
	return out + invalidMark(r.corrupt)
}

func genReserveRelocation(g *generator) randomOp {
	r := relocationSpec{
		id: g.n(2), object: g.objRef(0.8), version: g.versionRef(), target: g.targetRef(),
		capVariant: pick(g, 0, 0, 0, 0, 1), wrongSrc: g.chance(0.08),
	}
	if g.bad() {
		r.corrupt = 1 + g.n(2)
	}
	return reserveRelocationOp(r)
}

// build returns the model-side request.
func (r relocationSpec) build(k *knowledge) location.RelocationReservationRequest {
	o := randomObjects()[r.object.resolve(k)]
	key := o.key()
	t := r.target.resolve(k)
	req := location.RelocationReservationRequest{
		ReservationID:                 randomRelocationIDs()[r.id],
		AuthorityKey:                  key,
		ExpectedStoreVersion:          r.version.resolve(k, key),
		ObjectKind:                    o.kind,
		StableType:                    o.stableType,
		SourceDescriptor:              randomNodeKeys()[0],
		SourceNodeLifecycleGeneration: 1,
		SourceOwner:                   k.latestToken("owner-a"),
		TargetDescriptor:              t.Descriptor(),
		TargetNodeLifecycleGeneration: t.NodeLifecycleGeneration,
		TargetOwner:                   t.Owner,
		Capacity:                      objectCapacity(o, 0),
	}
	if snap := k.facts(key).snap; snap != nil {
		a := snap.Allocation
		req.ObjectKind, req.StableType = a.ObjectKind, a.StableType
		req.SourceDescriptor, req.SourceNodeLifecycleGeneration = a.Descriptor, a.DescriptorLifecycleGeneration
		req.SourceOwner = snap.Owner
		req.Capacity = a.Capacity.Clone()
	}
	if r.capVariant == 1 {
		req.Capacity = objectCapacity(o, 1)
	}
	if r.wrongSrc {
		req.SourceNodeLifecycleGeneration++
	}
	switch r.corrupt {
	case 1:
		req.ReservationID = ""
	case 2:
		req.Capacity = location.CapacityVector{}
	}
	return req
}

// reserveRelocationOp is ReserveRelocationCapacity(request).
func reserveRelocationOp(spec relocationSpec) randomOp {
	return randomOp{name: "ReserveRelocationCapacity", args: func() string { return spec.String() }, run: func(x *runState) {
		req := spec.build(x.know)
		key := req.AuthorityKey
		x.inputs(req)
		m, s, ok := both(x, func(sd side) (location.RelocationReserveResult, error) {
			c := req
			c.ExpectedStoreVersion = sd.version(key, c.ExpectedStoreVersion)
			c.SourceOwner = sd.token(c.SourceOwner)
			c.TargetOwner = sd.token(c.TargetOwner)
			return sd.store.ReserveRelocationCapacity(x.ctx, c)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.same(".Fence", m.Fence, s.Fence)
		x.readResult(".Current", key, m.Current, s.Current)
		if !x.ok() {
			return
		}
		if m.Kind == location.KindReserved {
			x.know.relocs[req.ReservationID] = req
		}
		x.know.learnRead(key, m.Current)
	}}
}

func genAbortRelocation(g *generator) randomOp {
	ids := append(randomRelocationIDs(), "rel-unknown")
	return abortRelocationOp(location.RelocationFence(pick(g, ids...)))
}

// abortRelocationOp is AbortRelocationCapacity(fence).
func abortRelocationOp(fence location.RelocationFence) randomOp {
	return randomOp{name: "AbortRelocationCapacity", args: func() string { return string(fence) }, run: func(x *runState) {
		x.inputs(fence)
		m, s, ok := both(x, func(sd side) (location.ResultKind, error) {
			return sd.store.AbortRelocationCapacity(x.ctx, fence)
		})
		if ok {
			x.kind("", m, s)
		}
	}}
}

// randomAggregateIDs are the aggregate ids; the second is a relocation id
// (adoption).
func randomAggregateIDs() []string { return []string{"agg-1", "rel-1"} }

// aggPart is a symbolic aggregate participant.
type aggPart struct {
	object   objRef
	preserve bool
	version  versionRef
}

// aggregateSpec is a symbolic PrepareAggregate request.
type aggregateSpec struct {
	id         int
	generation int64
	parts      []aggPart
	target     targetRef
	wrongCap   bool
	// corrupt: 1 participants out of order, 2 a 31-byte digest,
	// 3 generation 0.
	corrupt int
}

// String renders the spec.
func (a aggregateSpec) String() string {
	var parts []string
	for _, p := range a.parts {
		t := "newOwner"
		if p.preserve {
			t = "preserve"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", p.object, t, p.version))
	}
	out := fmt.Sprintf("%s/%d %v → %s", randomAggregateIDs()[a.id], a.generation, parts, a.target)
	if a.wrongCap {
		out += " wrong-capacity"
	}
	return out + invalidMark(a.corrupt)
}

func genPrepareAggregate(g *generator) randomOp {
	a := aggregateSpec{id: g.n(2), generation: pick[int64](g, 1, 1, 2), target: g.targetRef(), wrongCap: g.chance(0.08)}
	for i, n := 0, 1+g.n(2); i < n; i++ {
		o := g.objRef(0.8)
		if o.mode == objActive {
			o.index = i
		}
		a.parts = append(a.parts, aggPart{object: o, preserve: g.chance(0.2), version: g.versionRef()})
	}
	if g.bad() {
		a.corrupt = 1 + g.n(3)
	}
	return prepareAggregateOp(a)
}

// addCapacities sums capacity vectors; the spot type is the first one seen.
func addCapacities(vs []location.CapacityVector) location.CapacityVector {
	var out location.CapacityVector
	for _, v := range vs {
		out.Actors += v.Actors
		out.Spots += v.Spots
		if v.SpotType == nil {
			continue
		}
		if out.SpotType == nil {
			st := *v.SpotType
			out.SpotType = &st
		} else if out.SpotType.ObjectKind == v.SpotType.ObjectKind && out.SpotType.StableType == v.SpotType.StableType {
			out.SpotType.Count += v.SpotType.Count
		}
	}
	return out
}

// build returns the model-side request: participants in byte order of
// their keys, and the capacity of the newOwner participants as the model
// last showed them.
func (a aggregateSpec) build(k *knowledge) location.AggregatePrepareRequest {
	t := a.target.resolve(k)
	var parts []location.AggregateParticipant
	var moved []location.CapacityVector
	for i, p := range a.parts {
		o := randomObjects()[p.object.resolve(k)]
		key := o.key()
		if a.corrupt != 1 && slices.ContainsFunc(parts, func(q location.AggregateParticipant) bool { return q.AuthorityKey == key }) {
			continue
		}
		tr := location.TransitionNewOwner
		if p.preserve {
			tr = location.TransitionPreserve
		} else if snap := k.facts(key).snap; snap != nil {
			moved = append(moved, snap.Allocation.Capacity)
		} else {
			moved = append(moved, objectCapacity(o, 0))
		}
		parts = append(parts, location.AggregateParticipant{
			AuthorityKey:         key,
			ExpectedStoreVersion: p.version.resolve(k, key),
			OwnerTransition:      tr,
			AuthorityPayload:     []byte(fmt.Sprintf("agg-%d", i)),
			MembershipMutation:   []byte(fmt.Sprintf("mem-%d", i)),
		})
	}
	slices.SortStableFunc(parts, func(x, y location.AggregateParticipant) int { return cmp.Compare(x.AuthorityKey, y.AuthorityKey) })
	capacity := addCapacities(moved)
	if capacity.Actors == 0 && capacity.Spots == 0 && capacity.SpotType == nil {
		capacity.Actors = 1
	}
	if a.wrongCap {
		capacity.Spots++
	}
	req := location.AggregatePrepareRequest{
		AggregateID:                         randomAggregateIDs()[a.id],
		AggregateGeneration:                 a.generation,
		Participants:                        parts,
		InventoryDigest:                     bytes.Repeat([]byte{7}, 32),
		TargetDescriptor:                    t.Descriptor(),
		TargetDescriptorLifecycleGeneration: t.NodeLifecycleGeneration,
		Capacity:                            capacity,
		TargetOwner:                         t.Owner,
	}
	switch a.corrupt {
	case 1:
		slices.Reverse(req.Participants)
		if len(req.Participants) == 1 {
			req.Participants = append(req.Participants, req.Participants[0])
		}
	case 2:
		req.InventoryDigest = req.InventoryDigest[:31]
	case 3:
		req.AggregateGeneration = 0
	}
	return req
}

// prepareAggregateOp is PrepareAggregate(request).
func prepareAggregateOp(spec aggregateSpec) randomOp {
	return randomOp{name: "PrepareAggregate", args: func() string { return spec.String() }, run: func(x *runState) {
		req := spec.build(x.know)
		x.inputs(req)
		m, s, ok := both(x, func(sd side) (location.AggregatePrepareResult, error) {
			c := req
			c.Participants = slices.Clone(c.Participants)
			for i := range c.Participants {
				c.Participants[i].ExpectedStoreVersion = sd.version(c.Participants[i].AuthorityKey, c.Participants[i].ExpectedStoreVersion)
			}
			c.TargetOwner = sd.token(c.TargetOwner)
			return sd.store.PrepareAggregate(x.ctx, c)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.same(".Fence", m.Fence, s.Fence)
		if x.ok() && (m.Kind == location.KindPrepared || m.Kind == location.KindAlreadyPrepared) {
			f := m.Fence
			x.know.lastAggregate = &f
		}
	}}
}

// aggregateFenceOp is CommitAggregate or AbortAggregate of a fence; last
// names the aggregate last prepared instead.
func aggregateFenceOp(name string, fence location.AggregateFence, last bool, call func(x *runState, s location.Store, f location.AggregateFence) (location.ResultKind, error)) randomOp {
	return randomOp{name: name, args: func() string {
		return lastArgs(last, fmt.Sprintf("%s/%d", fence.AggregateID, fence.AggregateGeneration))
	}, run: func(x *runState) {
		f := fence
		if l := x.know.lastAggregate; last && l != nil {
			f = *l
		}
		x.inputs(f)
		m, s, ok := both(x, func(sd side) (location.ResultKind, error) { return call(x, sd.store, f) })
		if ok {
			x.kind("", m, s)
		}
	}}
}

// aggregateFence draws a fence.
func (g *generator) aggregateFence() location.AggregateFence {
	return location.AggregateFence{AggregateID: pick(g, append(randomAggregateIDs(), "agg-unknown")...), AggregateGeneration: pick[int64](g, 1, 1, 2)}
}

func genCommitAggregate(g *generator) randomOp {
	return aggregateFenceOp("CommitAggregate", g.aggregateFence(), g.chance(0.6), func(x *runState, s location.Store, f location.AggregateFence) (location.ResultKind, error) {
		return s.CommitAggregate(x.ctx, f)
	})
}

func genAbortAggregate(g *generator) randomOp {
	return aggregateFenceOp("AbortAggregate", g.aggregateFence(), g.chance(0.6), func(x *runState, s location.Store, f location.AggregateFence) (location.ResultKind, error) {
		return s.AbortAggregate(x.ctx, f)
	})
}
