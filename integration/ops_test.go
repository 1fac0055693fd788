package integration

import (
	"context"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
)

// The operations of the workload. A call carries the store's numbers (what
// the clients learnt from earlier answers); run executes it on any
// location.Store, the etcd store under test or the memstore model.

// opKind names an operation.
type opKind string

// Operation kinds.
const (
	opClaim          opKind = "ClaimOwnerLease"
	opRenew          opKind = "RenewOwnerLease"
	opRelease        opKind = "ReleaseOwnerLease"
	opReadLease      opKind = "ReadOwnerLease"
	opExpire         opKind = "ExpireOwnerLease"
	opExpireGen      opKind = "LeaseExpiry"
	opUpdateMeshNode opKind = "UpdateMeshNode"
	opListMeshNodes  opKind = "ListMeshNodes"
	opUpdateSpot     opKind = "UpdateSpot"
	opRemoveSpot     opKind = "RemoveSpot"
	opResolveSpot    opKind = "ResolveSpot"
	opListSpots      opKind = "ListSpots"
	opReserve        opKind = "Reserve"
	opCommit         opKind = "Commit"
	opAbort          opKind = "AbortCreation"
	opCAS            opKind = "CompareExchangeAuthority"
	opReadAuthority  opKind = "ReadAuthority"
	opListAuthority  opKind = "ListAuthorities"
	opUpdatePeer     opKind = "UpdatePeer"
	opListPeers      opKind = "ListPeers"
	opReadLiveness   opKind = "ReadOwnerLiveness"
)

// writes reports whether the kind can change the store.
func (k opKind) writes() bool {
	switch k {
	case opReadLease, opListMeshNodes, opResolveSpot, opListSpots, opReadAuthority, opListAuthority, opListPeers, opReadLiveness:
		return false
	}
	return true
}

// kvOnly reports whether every effect of the kind goes through KV
// transactions (the owner-lease revocation of ExpireOwnerLease does not).
func (k opKind) kvOnly() bool { return k != opExpire && k != opExpireGen }

// call is one operation with its arguments; only the fields of its kind
// are set.
type call struct {
	kind    opKind
	owner   string
	ttl     time.Duration
	token   location.OwnerToken
	intent  location.WriteIntent
	desc    location.MeshNodeDescriptor
	spot    location.SpotLocation
	spotKey location.SpotKey
	mesh    string
	reserve location.ReserveRequest
	commit  location.CommitRequest
	abort   location.AbortRequest
	authKey location.AuthorityKey
	version location.StoreVersion
	mut     location.AuthorityMutation
	peer    location.PeerLocation
	owners  []string
}

// String describes the call for reports.
func (c call) String() string {
	switch c.kind {
	case opClaim:
		return fmt.Sprintf("%s(%s, %v)", c.kind, c.owner, c.ttl)
	case opRenew, opRelease:
		return fmt.Sprintf("%s(%s/%d)", c.kind, c.token.OwnerID, c.token.LeaseGeneration)
	case opReadLease, opExpire:
		return fmt.Sprintf("%s(%s)", c.kind, c.owner)
	case opExpireGen:
		return fmt.Sprintf("%s(%s/%d)", c.kind, c.token.OwnerID, c.token.LeaseGeneration)
	case opUpdateMeshNode:
		return fmt.Sprintf("%s(%s/%s rev %d %v by %s/%d, %v)", c.kind, c.desc.MeshName, c.desc.RID, c.desc.DescriptorRevision,
			c.desc.State, c.desc.OwnerID, c.desc.LeaseGeneration, c.intent)
	case opListMeshNodes, opListSpots:
		return fmt.Sprintf("%s(%s)", c.kind, c.mesh)
	case opUpdateSpot:
		return fmt.Sprintf("%s(%s by %s/%d, %v)", c.kind, c.spot.SpotID, c.spot.OwnerID, c.spot.LeaseGeneration, c.intent)
	case opRemoveSpot:
		return fmt.Sprintf("%s(%s by %s/%d)", c.kind, c.spotKey.SpotID, c.token.OwnerID, c.token.LeaseGeneration)
	case opResolveSpot:
		return fmt.Sprintf("%s(%s)", c.kind, c.spotKey.SpotID)
	case opReserve:
		return fmt.Sprintf("%s(%s on %s by %s/%d)", c.kind, c.reserve.Key.GlobalID, c.reserve.Target.NodeRID,
			c.reserve.Target.Owner.OwnerID, c.reserve.Target.Owner.LeaseGeneration)
	case opCommit:
		return fmt.Sprintf("%s(%s res %s v%s)", c.kind, c.commit.Key.GlobalID, short(c.commit.ReservationID), c.commit.ExpectedStoreVersion)
	case opAbort:
		return fmt.Sprintf("%s(%s res %s v%s)", c.kind, c.abort.Key.GlobalID, short(c.abort.ReservationID), c.abort.ExpectedStoreVersion)
	case opCAS:
		return fmt.Sprintf("%s(%s v%s %s %q)", c.kind, c.authKey, c.version, c.mut.Kind, c.mut.Payload)
	case opReadAuthority:
		return fmt.Sprintf("%s(%s)", c.kind, c.authKey)
	case opUpdatePeer:
		return fmt.Sprintf("%s(%s/%s by %s, %v)", c.kind, c.peer.MeshName, *c.peer.NodeRID, c.peer.OwnerID, c.intent)
	case opListPeers:
		return fmt.Sprintf("%s(%s)", c.kind, c.mesh)
	case opReadLiveness:
		return fmt.Sprintf("%s(%v)", c.kind, c.owners)
	}
	return string(c.kind)
}

// short abbreviates a reservation id.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// leaseHooks are the test hooks a store offers besides location.Store.
type leaseHooks struct {
	// expire makes the owner's current lease not live (etcd: revoke).
	expire func(ctx context.Context, ownerID string) error
}

// run executes the call on st and returns its result.
func (c call) run(ctx context.Context, st location.Store, h leaseHooks) (any, error) {
	switch c.kind {
	case opClaim:
		return st.ClaimOwnerLease(ctx, c.owner, c.ttl)
	case opRenew:
		return st.RenewOwnerLease(ctx, c.token, c.ttl)
	case opRelease:
		return st.ReleaseOwnerLease(ctx, c.token)
	case opReadLease:
		return st.ReadOwnerLease(ctx, c.owner)
	case opExpire:
		return nil, h.expire(ctx, c.owner)
	case opExpireGen:
		// Run on the model only: the lease of the token ended by itself,
		// which it can do only while it is the owner's lease (found);
		// the recorded answer is found.
		cur, err := st.ReadOwnerLease(ctx, c.token.OwnerID)
		if err != nil {
			return nil, err
		}
		if cur.Kind != location.KindFound || cur.Token != c.token {
			return location.KindMissing, nil
		}
		return location.KindFound, h.expire(ctx, c.token.OwnerID)
	case opUpdateMeshNode:
		return st.UpdateMeshNode(ctx, c.desc, c.intent)
	case opListMeshNodes:
		return st.ListMeshNodes(ctx, c.mesh, location.PageRequest{})
	case opUpdateSpot:
		return st.UpdateSpot(ctx, c.spot, c.intent)
	case opRemoveSpot:
		return st.RemoveSpot(ctx, c.spotKey, c.token)
	case opResolveSpot:
		return st.ResolveSpot(ctx, c.spotKey)
	case opListSpots:
		return st.ListSpots(ctx, location.SpotFilter{MeshName: &c.mesh}, location.PageRequest{})
	case opReserve:
		return st.Reserve(ctx, c.reserve)
	case opCommit:
		return st.Commit(ctx, c.commit)
	case opAbort:
		return st.AbortCreation(ctx, c.abort)
	case opCAS:
		return st.CompareExchangeAuthority(ctx, c.authKey, c.version, c.mut)
	case opReadAuthority:
		return st.ReadAuthority(ctx, c.authKey)
	case opListAuthority:
		return st.ListAuthorities(ctx, "", "", 1000)
	case opUpdatePeer:
		return st.UpdatePeer(ctx, c.peer, c.intent)
	case opListPeers:
		typ := location.AutoConnectRouteMesh
		return st.ListPeers(ctx, location.PeerFilter{AutoConnectType: &typ, MeshName: &c.mesh})
	case opReadLiveness:
		lr, ok := st.(location.OwnerLivenessReader)
		if !ok {
			return nil, fmt.Errorf("%T: %w: owner liveness", st, location.ErrUnsupported)
		}
		return lr.ReadOwnerLiveness(ctx, c.owners)
	}
	return nil, fmt.Errorf("unknown operation %q", c.kind)
}

// toModel translates the store's numbers in the call into the model's.
func (c call) toModel(r *conformance.Renamer) call {
	tok := func(t location.OwnerToken) location.OwnerToken {
		t.LeaseGeneration = r.ToModelNumber(conformance.NSLease, t.LeaseGeneration)
		return t
	}
	key := func(k location.ObjectCreationKey) string {
		ak, err := location.EncodeAuthorityKey(k.Kind, k.GlobalID)
		if err != nil {
			return ""
		}
		return string(ak)
	}
	m := c
	m.token = tok(c.token)
	m.desc.LeaseGeneration = r.ToModelNumber(conformance.NSLease, c.desc.LeaseGeneration)
	m.spot.LeaseGeneration = r.ToModelNumber(conformance.NSLease, c.spot.LeaseGeneration)
	m.reserve.Target.Owner = tok(c.reserve.Target.Owner)
	m.commit.Target.Owner = tok(c.commit.Target.Owner)
	m.commit.ReservationID = r.ToModelText(conformance.NSReservation, c.commit.ReservationID)
	m.commit.ExpectedStoreVersion = location.StoreVersion(r.ToModelText(conformance.NSVersion(key(c.commit.Key)), string(c.commit.ExpectedStoreVersion)))
	m.abort.Target.Owner = tok(c.abort.Target.Owner)
	m.abort.ReservationID = r.ToModelText(conformance.NSReservation, c.abort.ReservationID)
	m.abort.ExpectedStoreVersion = location.StoreVersion(r.ToModelText(conformance.NSVersion(key(c.abort.Key)), string(c.abort.ExpectedStoreVersion)))
	m.version = location.StoreVersion(r.ToModelText(conformance.NSVersion(string(c.authKey)), string(c.version)))
	if c.mut.TargetOwner != nil {
		t := tok(*c.mut.TargetOwner)
		m.mut.TargetOwner = &t
	}
	if c.mut.ExpectedOwner != nil {
		t := tok(*c.mut.ExpectedOwner)
		m.mut.ExpectedOwner = &t
	}
	return m
}
