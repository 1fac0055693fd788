package demo

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// actor is one demo actor and the node it lives on.
type actor struct {
	id               string
	seq              int
	home             *node
	objectGeneration int64
}

// creationKey is the actor's authority creation key.
func (a *actor) creationKey() location.ObjectCreationKey {
	return location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: a.id}
}

// authorityKey is the actor's authority record key.
func (a *actor) authorityKey() (location.AuthorityKey, error) {
	return location.EncodeAuthorityKey(location.ObjectActor, a.id)
}

// row is the actor's location row on node n.
func (a *actor) row(mesh string, n *node) location.ActorLocation {
	return location.ActorLocation{
		MeshName: mesh, ActorID: a.id, ActorType: actorType,
		ActorRef:     location.ActorRef{ActorID: a.id, ObjectGeneration: a.objectGeneration, MeshName: mesh, NodeRID: n.rid},
		OwnerNodeRID: n.rid, OwnerNodeGeneration: n.lifecycle,
		SpotKind: location.SpotEntry, SpotID: "entry-" + n.name, SpotGeneration: 1, MembershipEpoch: 1,
		OwnerID: n.owner, LeaseGeneration: n.token.LeaseGeneration,
	}
}

// createActor creates a's authority record on n (reserve, then complete
// the creation with its terminal) and writes its location row.
func (r *runner) createActor(ctx context.Context, a *actor, n *node) error {
	request := []byte("create " + a.id)
	digest := sha256.Sum256(request)
	target := n.creationTarget(r.opts.Mesh)
	res, err := r.store.Reserve(ctx, location.ReserveRequest{
		Key: a.creationKey(),
		Intent: location.CreationIntent{StableType: actorType, RequestContentReference: "demo:" + a.id,
			RequestSHA256: digest[:], RequestEncodedSize: int64(len(request))},
		Target: target, CreatingPayload: []byte("creating " + a.id), Capacity: location.CapacityVector{Actors: 1},
	})
	if err != nil {
		return fmt.Errorf("%s: reserve: %w", a.id, err)
	}
	if res.Kind != location.KindReserved {
		return errState(a.id+": reserve", res.Kind)
	}
	envelope := []byte("created " + a.id + " on " + n.name)
	sum := sha256.Sum256(envelope)
	done, err := r.store.CompleteCreation(ctx, location.CompleteCreationRequest{
		Key: a.creationKey(), ReservationID: res.ReservationID, ExpectedStoreVersion: res.Creating.StoreVersion, Target: target,
		Completion: location.CreationCompletion{Kind: location.TerminalCreated, ReadyPayload: []byte("ready on " + n.name),
			Terminal: location.TerminalPublication{
				Operation: location.OperationIdentity{SourceNodeRID: n.rid, SourceNodeGeneration: n.lifecycle,
					OperationID: location.OperationID{Low: uint64(a.seq)}},
				TerminalEnvelope: envelope, TerminalEnvelopeSHA256: sum[:], OperationDeadline: time.Now().Add(time.Minute),
			}},
	})
	if err != nil {
		return fmt.Errorf("%s: complete creation: %w", a.id, err)
	}
	if done.Kind != location.KindCreated {
		return errState(a.id+": complete creation", done.Kind)
	}
	a.objectGeneration = done.Ready.ObjectGeneration
	if err := r.writeActorRow(ctx, a, n, location.IntentNewClaim); err != nil {
		return err
	}
	a.home = n
	r.out.eventf("%s created on %s: reserved (reservation %.8s…), completed (authority version %s, object gen %d), actor row written",
		a.id, n.name, res.ReservationID, done.Ready.StoreVersion, a.objectGeneration)
	return nil
}

// writeActorRow writes a's location row on n with intent.
func (r *runner) writeActorRow(ctx context.Context, a *actor, n *node, intent location.WriteIntent) error {
	res, err := r.store.UpdateActor(ctx, a.row(r.opts.Mesh, n), intent)
	if err != nil {
		return fmt.Errorf("%s: write actor row (%s): %w", a.id, intent, err)
	}
	if res.Status != location.Stored {
		return errState(fmt.Sprintf("%s: write actor row (%s)", a.id, intent), res.Status)
	}
	return nil
}

// moveActor relocates a to node to through the authority API: reserve
// capacity on the target for the record's current version, then
// compare-exchange the record to the new owner with that reservation as
// its fence; finally the actor row moves with rowIntent. The source may be
// dead.
func (r *runner) moveActor(ctx context.Context, a *actor, to *node, rowIntent location.WriteIntent) error {
	key, err := a.authorityKey()
	if err != nil {
		return err
	}
	read, err := r.store.ReadAuthority(ctx, key)
	if err != nil {
		return fmt.Errorf("%s: read authority: %w", a.id, err)
	}
	if read.Kind != location.KindSnapshot {
		return errState(a.id+": read authority", read.Kind)
	}
	before := read.Snapshot
	r.relocations++
	reservation := fmt.Sprintf("relocate-%s-%d", a.id, r.relocations)
	reserved, err := r.store.ReserveRelocationCapacity(ctx, location.RelocationReservationRequest{
		ReservationID: reservation, AuthorityKey: key, ExpectedStoreVersion: before.StoreVersion,
		ObjectKind: location.ObjectActor, StableType: actorType,
		SourceDescriptor: before.Allocation.Descriptor, SourceNodeLifecycleGeneration: before.Allocation.DescriptorLifecycleGeneration,
		SourceOwner:      before.Owner,
		TargetDescriptor: to.key(r.opts.Mesh), TargetNodeLifecycleGeneration: to.lifecycle, TargetOwner: to.token,
		Capacity: location.CapacityVector{Actors: 1},
	})
	if err != nil {
		return fmt.Errorf("%s: reserve relocation capacity: %w", a.id, err)
	}
	if reserved.Kind != location.KindReserved {
		return errState(a.id+": reserve relocation capacity", reserved.Kind)
	}
	fence := reserved.Fence
	target := to.token
	cas, err := r.store.CompareExchangeAuthority(ctx, key, before.StoreVersion, location.AuthorityMutation{
		Kind: location.MutationPut, Payload: []byte("ready on " + to.name), Transition: location.TransitionNewOwner,
		TargetOwner: &target, RelocationFence: &fence,
	})
	if err != nil {
		return fmt.Errorf("%s: compare-exchange to %s: %w", a.id, to.name, err)
	}
	if cas.Kind != location.KindStored {
		return errState(a.id+": compare-exchange to "+to.name, cas.Kind)
	}
	if cas.Stored.Owner != to.token {
		return fmt.Errorf("%s: the authority record is owned by %+v after the move, want %+v", a.id, cas.Stored.Owner, to.token)
	}
	if err := r.writeActorRow(ctx, a, to, rowIntent); err != nil {
		return err
	}
	got, err := r.store.ResolveActor(ctx, location.ActorKey{MeshName: r.opts.Mesh, ActorID: a.id})
	if err != nil {
		return fmt.Errorf("%s: resolve: %w", a.id, err)
	}
	if got == nil || got.OwnerNodeRID != to.rid {
		return fmt.Errorf("%s: resolves to %v after the move, want %s", a.id, got, to.name)
	}
	from := a.home
	a.home = to
	r.out.eventf("%s moved %s → %s: capacity reserved (fence %s), authority version %s → %s, owner gen %d → %d, actor row %s",
		a.id, from.name, to.name, fence, before.StoreVersion, cas.Stored.StoreVersion,
		before.AuthorityOwnerGeneration, cas.Stored.AuthorityOwnerGeneration, rowVerb(rowIntent))
	return nil
}

// rowVerb says how an actor row moved.
func rowVerb(intent location.WriteIntent) string {
	if intent == location.IntentTakeover {
		return "taken over"
	}
	return "claimed (its owner is gone)"
}
