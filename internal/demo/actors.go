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
	// moves counts the relocations begun; the current one's reservation
	// id stays the same across its retries.
	moves int
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
	inc := n.incarnation()
	return location.ActorLocation{
		MeshName: mesh, ActorID: a.id, ActorType: actorType,
		ActorRef:     location.ActorRef{ActorID: a.id, ObjectGeneration: a.objectGeneration, MeshName: mesh, NodeRID: n.rid},
		OwnerNodeRID: n.rid, OwnerNodeGeneration: inc.LifecycleGeneration,
		SpotKind: location.SpotEntry, SpotID: "entry-" + n.name, SpotGeneration: 1, MembershipEpoch: 1,
		OwnerID: n.owner, LeaseGeneration: inc.Token.LeaseGeneration,
	}
}

// createActor creates a's authority record on n (reserve, then complete
// the creation with its terminal) and writes its location row. It resumes
// whatever an earlier attempt whose answer was lost did: it reads the
// record first and completes a reservation it finds, or skips a creation
// already completed.
func (r *runner) createActor(ctx context.Context, a *actor, n *node) error {
	key, err := a.authorityKey()
	if err != nil {
		return err
	}
	err = r.retry(ctx, a.id+": create", func(ctx context.Context) error {
		read, err := r.store.ReadAuthority(ctx, key)
		if err != nil {
			return fmt.Errorf("read authority: %w", err)
		}
		switch s := read.Snapshot; {
		case read.Kind == location.KindMissing:
			return r.reserveActor(ctx, a, n)
		case s != nil && s.PendingCreation != nil:
			return r.completeActor(ctx, a, s)
		case s != nil:
			a.objectGeneration = s.ObjectGeneration
			return nil
		default:
			return errState(a.id+": read authority", read.Kind)
		}
	})
	if err != nil {
		return err
	}
	if err := r.writeActorRow(ctx, a, n, location.IntentNewClaim); err != nil {
		return err
	}
	a.home = n
	r.out.eventf("%s created on %s: reserved, completed (object gen %d), actor row written", a.id, n.name, a.objectGeneration)
	return nil
}

// reserveActor reserves a's creation on n and completes it.
func (r *runner) reserveActor(ctx context.Context, a *actor, n *node) error {
	request := []byte("create " + a.id)
	digest := sha256.Sum256(request)
	res, err := r.store.Reserve(ctx, location.ReserveRequest{
		Key: a.creationKey(),
		Intent: location.CreationIntent{StableType: actorType, RequestContentReference: "demo:" + a.id,
			RequestSHA256: digest[:], RequestEncodedSize: int64(len(request))},
		Target: n.creationTarget(r.opts.Mesh), CreatingPayload: []byte("creating " + a.id), Capacity: location.CapacityVector{Actors: 1},
	})
	if err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	if res.Kind != location.KindReserved {
		return errState(a.id+": reserve", res.Kind)
	}
	r.out.eventf("%s reserved on %s (reservation %.8s…, authority version %s)", a.id, n.name, res.ReservationID, res.Creating.StoreVersion)
	return r.completeActor(ctx, a, res.Creating)
}

// completeActor completes the reservation of the reserved record s. A
// reservation whose target is no longer live (its node rejoined under a
// new lease) is aborted: the next attempt reserves again.
func (r *runner) completeActor(ctx context.Context, a *actor, s *location.AuthoritySnapshot) error {
	alloc := s.Allocation
	target := location.CreationTarget{MeshName: alloc.Descriptor.MeshName, NodeRID: alloc.Descriptor.RID,
		NodeLifecycleGeneration: alloc.DescriptorLifecycleGeneration, Owner: s.Owner}
	envelope := []byte("created " + a.id + " on " + string(target.NodeRID))
	sum := sha256.Sum256(envelope)
	done, err := r.store.CompleteCreation(ctx, location.CompleteCreationRequest{
		Key: a.creationKey(), ReservationID: s.PendingCreation.ReservationID, ExpectedStoreVersion: s.StoreVersion, Target: target,
		Completion: location.CreationCompletion{Kind: location.TerminalCreated, ReadyPayload: []byte("ready on " + string(target.NodeRID)),
			Terminal: location.TerminalPublication{
				Operation: location.OperationIdentity{SourceNodeRID: target.NodeRID, SourceNodeGeneration: target.NodeLifecycleGeneration,
					OperationID: location.OperationID{Low: uint64(a.seq)}},
				TerminalEnvelope: envelope, TerminalEnvelopeSHA256: sum[:], OperationDeadline: time.Now().Add(time.Minute),
			}},
	})
	if err != nil {
		return fmt.Errorf("complete creation: %w", err)
	}
	switch done.Kind {
	case location.KindCreated:
		a.objectGeneration = done.Ready.ObjectGeneration
		return nil
	case location.KindStale:
		aborted, err := r.store.AbortCreation(ctx, location.AbortRequest{Key: a.creationKey(),
			ReservationID: s.PendingCreation.ReservationID, ExpectedStoreVersion: s.StoreVersion, Target: target})
		if err != nil {
			return fmt.Errorf("abort a stale reservation: %w", err)
		}
		return fmt.Errorf("%s: the reservation's target is no longer live; aborted it (%s)", a.id, aborted)
	default:
		// KindAlreadyCompleted: an earlier attempt completed it; the next
		// read finds the record active.
		return errState(a.id+": complete creation", done.Kind)
	}
}

// writeActorRow writes a's location row on n with intent. A row already
// written by n's current incarnation (an earlier attempt whose answer was
// lost) counts as written.
func (r *runner) writeActorRow(ctx context.Context, a *actor, n *node, intent location.WriteIntent) error {
	return r.retry(ctx, fmt.Sprintf("%s: write actor row (%s)", a.id, intent), func(ctx context.Context) error {
		want := a.row(r.opts.Mesh, n)
		got, err := r.store.ResolveActor(ctx, location.ActorKey{MeshName: r.opts.Mesh, ActorID: a.id})
		if err != nil {
			return fmt.Errorf("resolve: %w", err)
		}
		if got != nil && got.OwnerID == want.OwnerID && got.LeaseGeneration == want.LeaseGeneration &&
			got.OwnerNodeRID == want.OwnerNodeRID && got.ActorRef.ObjectGeneration == want.ActorRef.ObjectGeneration {
			return nil
		}
		res, err := r.store.UpdateActor(ctx, want, intent)
		if err != nil {
			return err
		}
		if res.Status != location.Stored {
			return errState("write", res.Status)
		}
		return nil
	})
}

// moveActor relocates a to node to through the authority API: reserve
// capacity on the target for the record's current version, then
// compare-exchange the record to the new owner with that reservation as
// its fence; finally the actor row moves with rowIntent. The source may be
// dead. A move an earlier attempt completed (the record already owned by
// to) is not repeated; a reservation is asked again with the same id and
// request, which the store answers alreadyReserved.
func (r *runner) moveActor(ctx context.Context, a *actor, to *node, rowIntent location.WriteIntent) error {
	key, err := a.authorityKey()
	if err != nil {
		return err
	}
	a.moves++
	reservation := fmt.Sprintf("relocate-%s-%d", a.id, a.moves)
	var before, after *location.AuthoritySnapshot
	var fence location.RelocationFence
	err = r.retry(ctx, a.id+": relocate to "+to.name, func(ctx context.Context) error {
		read, err := r.store.ReadAuthority(ctx, key)
		if err != nil {
			return fmt.Errorf("read authority: %w", err)
		}
		if read.Kind != location.KindSnapshot {
			return errState(a.id+": read authority", read.Kind)
		}
		cur := read.Snapshot
		if cur.Owner == to.token() {
			after = cur
			return nil // moved by an earlier attempt
		}
		before = cur
		reserved, err := r.store.ReserveRelocationCapacity(ctx, location.RelocationReservationRequest{
			ReservationID: reservation, AuthorityKey: key, ExpectedStoreVersion: cur.StoreVersion,
			ObjectKind: location.ObjectActor, StableType: actorType,
			SourceDescriptor: cur.Allocation.Descriptor, SourceNodeLifecycleGeneration: cur.Allocation.DescriptorLifecycleGeneration,
			SourceOwner:      cur.Owner,
			TargetDescriptor: to.key(r.opts.Mesh), TargetNodeLifecycleGeneration: to.lifecycle(), TargetOwner: to.token(),
			Capacity: location.CapacityVector{Actors: 1},
		})
		if err != nil {
			return fmt.Errorf("reserve relocation capacity: %w", err)
		}
		if reserved.Kind != location.KindReserved && reserved.Kind != location.KindAlreadyReserved {
			return errState(a.id+": reserve relocation capacity", reserved.Kind)
		}
		fence = reserved.Fence
		target := to.token()
		cas, err := r.store.CompareExchangeAuthority(ctx, key, cur.StoreVersion, location.AuthorityMutation{
			Kind: location.MutationPut, Payload: []byte("ready on " + to.name), Transition: location.TransitionNewOwner,
			TargetOwner: &target, RelocationFence: &fence,
		})
		if err != nil {
			return fmt.Errorf("compare-exchange to %s: %w", to.name, err)
		}
		if cas.Kind != location.KindStored {
			return errState(a.id+": compare-exchange to "+to.name, cas.Kind)
		}
		if cas.Stored.Owner != target {
			return failCheck("%s: the authority record is owned by %+v after the move, want %+v", a.id, cas.Stored.Owner, target)
		}
		after = cas.Stored
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.writeActorRow(ctx, a, to, rowIntent); err != nil {
		return err
	}
	var got *location.ActorLocation
	err = r.retry(ctx, a.id+": resolve", func(ctx context.Context) error {
		got, err = r.store.ResolveActor(ctx, location.ActorKey{MeshName: r.opts.Mesh, ActorID: a.id})
		return err
	})
	if err != nil {
		return err
	}
	if got == nil || got.OwnerNodeRID != to.rid {
		return failCheck("%s: resolves to %v after the move, want %s", a.id, got, to.name)
	}
	from := a.home
	a.home = to
	if before == nil {
		r.out.eventf("%s moved %s → %s (completed by an earlier attempt), actor row %s", a.id, from.name, to.name, rowVerb(rowIntent))
		return nil
	}
	r.out.eventf("%s moved %s → %s: capacity reserved (fence %s), authority version %s → %s, owner gen %d → %d, actor row %s",
		a.id, from.name, to.name, fence, before.StoreVersion, after.StoreVersion,
		before.AuthorityOwnerGeneration, after.AuthorityOwnerGeneration, rowVerb(rowIntent))
	return nil
}

// rowVerb says how an actor row moved.
func rowVerb(intent location.WriteIntent) string {
	if intent == location.IntentTakeover {
		return "taken over"
	}
	return "claimed (its owner is gone)"
}
