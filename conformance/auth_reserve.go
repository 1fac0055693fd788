package conformance

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section K of the authority catalogue: reserve (04 §2.4).

// authRequireUUIDv4 requires lower-case canonical UUID v4 text.
func authRequireUUIDv4(c *Case, id string) {
	c.Helper()
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	require.Regexp(c, re, id, "reservation id")
}

// requireReserveRefused requires reserve(req) to answer k (with current
// want, see requireReserveKind) and to change nothing.
func (e *authEnv) requireReserveRefused(what string, req location.ReserveRequest, k location.ResultKind, want *location.AuthoritySnapshot) {
	e.c.Helper()
	e.unchanged(what, func() { e.requireReserveKind(e.reserve(req), k, want) })
}

// requireReserveKind requires a reserve result of kind k with a current
// equal to want (nil = missing) for the kinds that carry one.
func (e *authEnv) requireReserveKind(res location.ReserveResult, k location.ResultKind, want *location.AuthoritySnapshot) {
	e.c.Helper()
	require.Equal(e.c, k, res.Kind, "reserve result: %s", authDescribeReserve(res))
	if k != location.KindReserved {
		require.Nil(e.c, res.Creating, "only reserved carries a creating snapshot")
		require.Empty(e.c, res.ReservationID, "only reserved carries a reservation id")
	}
	switch k {
	case location.KindAlreadyExists, location.KindTypeMismatch, location.KindConflict:
		e.requireReadIs(res.Current, want, "reserve "+string(k)+".current")
	}
}

// auth076 AUTH-076 Reserve a User Spot.
func auth076(c *Case) {
	e := newAuthEnv(c)
	u, ub := e.U(e.NA), e.U(e.NB)
	R := e.RS("c1", e.TA())
	authRequireUUIDv4(c, R.ReservationID)
	e.expectCreatingSpot(R, "c1")
	u = u.plusRooms(1, 0)
	e.requireU(e.NA, u)
	e.requireU(e.NB, ub)
	require.Zero(c, u.Spots.Active+u.Room.Active+u.Actors.Active)
}

// auth077 AUTH-077 Reserve an Actor.
func auth077(c *Case) {
	e := newAuthEnv(c)
	u := e.U(e.NA)
	R := e.RA("c2", e.TA())
	authRequireUUIDv4(c, R.ReservationID)
	require.Equal(c, location.PlacementAllocation{
		State: location.AllocationReserved, ObjectKind: location.ObjectActor, StableType: "player",
		Descriptor: e.NA.Key(), DescriptorLifecycleGeneration: 1, Capacity: fixture.VA(),
	}, R.Creating.Allocation)
	u.Actors.Reserved++
	e.requireU(e.NA, u)
}

// auth078 AUTH-078 Identity and text validation.
func auth078(c *Case) {
	e := newAuthEnv(c)
	bad := map[string]authBadReserve{
		"global id empty":        {location.ClassType, location.CodeAuthorityIdentityText, func(r *location.ReserveRequest) { r.Key.GlobalID = "" }},
		"global id with NUL":     {location.ClassType, location.CodeAuthorityIdentityText, func(r *location.ReserveRequest) { r.Key.GlobalID = "a\x00b" }},
		"global id of 256 bytes": {location.ClassRange, location.CodeAuthorityIdentityLength, func(r *location.ReserveRequest) { r.Key.GlobalID = strings.Repeat("a", 256) }},
		"global id 128 × é":      {location.ClassRange, location.CodeAuthorityIdentityLength, func(r *location.ReserveRequest) { r.Key.GlobalID = strings.Repeat("é", 128) }},
		"stable type empty":      {location.ClassType, location.CodeAuthorityIntentText, func(r *location.ReserveRequest) { r.Intent.StableType = "" }},
		"content reference empty": {location.ClassType, location.CodeAuthorityIntentText, func(r *location.ReserveRequest) {
			r.Intent.RequestContentReference = ""
		}},
	}
	e.requireReserveInvalid("c78", bad)
}

// authBadReserve is an invalid reserve request: the edit and the error it
// must give.
type authBadReserve struct {
	class location.ErrorClass
	code  string
	edit  func(r *location.ReserveRequest)
}

// requireReserveInvalid requires each edit of RS(id)'s request to fail with
// its class and code and to change nothing.
func (e *authEnv) requireReserveInvalid(id string, bad map[string]authBadReserve) {
	e.c.Helper()
	for name, b := range bad {
		req := fixture.SpotRequest(location.ObjectUserSpot, id, e.TA(), "room")
		b.edit(&req)
		e.requireInvalid("reserve with "+name, b.class, b.code, func() error { return errOf(e.c.S.Reserve(e.c.Ctx, req)) })
	}
}

// auth079 AUTH-079 Receipt, payload and capacity validation.
func auth079(c *Case) {
	e := newAuthEnv(c)
	st := func(n int64) *location.SpotTypeDelta {
		return &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: "room", Count: n}
	}
	receipt := func(edit func(r *location.ReserveRequest)) authBadReserve {
		return authBadReserve{location.ClassType, location.CodeAuthorityReceipt, edit}
	}
	capacity := func(v location.CapacityVector) authBadReserve {
		return authBadReserve{location.ClassRange, location.CodeAuthorityCapacity, func(r *location.ReserveRequest) { r.Capacity = v }}
	}
	bad := map[string]authBadReserve{
		"digest of 31 bytes":     receipt(func(r *location.ReserveRequest) { r.Intent.RequestSHA256 = fixture.Digest32(1)[:31] }),
		"digest of 33 bytes":     receipt(func(r *location.ReserveRequest) { r.Intent.RequestSHA256 = append(fixture.Digest32(1), 1) }),
		"encoded size -1":        receipt(func(r *location.ReserveRequest) { r.Intent.RequestEncodedSize = -1 }),
		"encoded size 1 MiB + 1": receipt(func(r *location.ReserveRequest) { r.Intent.RequestEncodedSize = fixture.MiB + 1 }),
		"creating payload 1 MiB + 1": {location.ClassRange, location.CodeAuthorityPayload, func(r *location.ReserveRequest) {
			r.CreatingPayload = fixture.Bytes(fixture.MiB+1, 'c')
		}},
		"capacity all zero":           capacity(location.CapacityVector{}),
		"capacity actors -1":          capacity(location.CapacityVector{Actors: -1, Spots: 1}),
		"capacity spot type count 0":  capacity(location.CapacityVector{Spots: 1, SpotType: st(0)}),
		"capacity actors 2^31":        capacity(location.CapacityVector{Actors: 1 << 31}),
		"capacity spot type count -1": capacity(location.CapacityVector{Spots: 1, SpotType: st(-1)}),
	}
	e.requireReserveInvalid("c79", bad)
	size := fixture.SpotRequest(location.ObjectUserSpot, "c79a", e.TA(), "room")
	size.Intent.RequestEncodedSize = fixture.MiB
	e.requireReserved(e.reserve(size))
	payload := fixture.SpotRequest(location.ObjectUserSpot, "c79b", e.TA(), "room")
	payload.CreatingPayload = fixture.Bytes(fixture.MiB, 'c')
	R := e.requireReserved(e.reserve(payload))
	require.Len(c, R.Creating.Payload, fixture.MiB)
}

// auth080 AUTH-080 Entry-Spot identity claims; a claim whose holder is no
// longer live does not block (A-03 fixed).
func auth080(c *Case) {
	e := newAuthEnv(c, authWithNAEntrySpot("lobby"))
	for _, kind := range []location.ObjectKind{location.ObjectUserSpot, location.ObjectInstanceSpot} {
		req := fixture.SpotRequest(kind, "lobby", e.TA(), "room")
		if kind == location.ObjectInstanceSpot {
			req = fixture.SpotRequest(kind, "lobby", e.TA(), "shard")
		}
		e.requireReserveRefused("reserve of a claimed "+string(kind), req, location.KindConflict, nil)
	}
	e.RA("lobby", e.TA())
	// A-03 fixed: a claim whose holder's lease is not live is free.
	e.publishNode("node-c", e.B, fixture.DefaultLimits(), "lobby3")
	e.release(e.B)
	e.RS("lobby3", e.TA())
}

// auth081 AUTH-081 Already active.
func auth081(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("c3", e.TA())
	e.requireReserveRefused("reserve of an active key", fixture.SpotRequest(location.ObjectUserSpot, "c3", e.TA(), "room"), location.KindAlreadyExists, S)
}

// auth082 AUTH-082 Already reserved.
func auth082(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("c4", e.TA())
	e.requireReserveRefused("reserve of a reserved key", fixture.SpotRequest(location.ObjectUserSpot, "c4", e.TB(), "room"), location.KindConflict, R.Creating)
}

// auth083 AUTH-083 User Spot vs Instance Spot.
func auth083(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("c5", e.TA())
	e.requireReserveRefused("reserve of an instance spot over a user spot", fixture.SpotRequest(location.ObjectInstanceSpot, "c5", e.TA(), "shard"), location.KindTypeMismatch, S)
}

// auth084 AUTH-084 Stable type differs.
func auth084(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("c6", e.TA())
	R := e.RS("c7", e.TA())
	e.requireReserveRefused("reserve with another stable type", fixture.SpotRequest(location.ObjectUserSpot, "c6", e.TA(), "hall"), location.KindTypeMismatch, S)
	e.requireReserveRefused("reserve with another stable type", fixture.SpotRequest(location.ObjectUserSpot, "c7", e.TA(), "hall"), location.KindTypeMismatch, R.Creating)
}

// auth085 AUTH-085 Target owner lease released.
func auth085(c *Case) {
	e := newAuthEnv(c)
	e.release(e.A)
	e.requireReserveRefused("reserve on a released owner", fixture.SpotRequest(location.ObjectUserSpot, "c8", e.TA(), "room"), location.KindConflict, nil)
}

// auth086 AUTH-086 Target lifecycle mismatch.
func auth086(c *Case) {
	e := newAuthEnv(c)
	T := e.TA()
	T.NodeLifecycleGeneration = 2
	e.requireReserveRefused("reserve with lifecycle 2", fixture.SpotRequest(location.ObjectUserSpot, "c9", T, "room"), location.KindConflict, nil)
}

// auth087 AUTH-087 Target owner not the node's owner; likewise a node
// that is no longer published.
func auth087(c *Case) {
	e := newAuthEnv(c)
	T := e.TA()
	T.Owner = e.B
	e.requireReserveRefused("reserve with another owner", fixture.SpotRequest(location.ObjectUserSpot, "c10", T, "room"), location.KindConflict, nil)
	e.removeNode(e.NA, e.A)
	e.requireReserveRefused("reserve on a removed node", fixture.SpotRequest(location.ObjectUserSpot, "c10", e.TA(), "room"), location.KindConflict, nil)
}

// requireExhausted requires placementCapacityExhausted and no change.
func (e *authEnv) requireExhausted(req location.ReserveRequest) {
	e.c.Helper()
	e.requireReserveRefused("reserve beyond capacity", req, location.KindPlacementCapacityExhausted, nil)
}

// auth088 AUTH-088 Overall spot limit.
func auth088(c *Case) {
	e := newAuthEnv(c, authWithNA(func(l *fixture.Limits) { l.Spots = 1 }))
	R := e.RS("c11", e.TA())
	e.requireExhausted(fixture.SpotRequest(location.ObjectUserSpot, "c12", e.TA(), "room"))
	require.Equal(c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectUserSpot, "c11", R, e.TA())))
	e.RS("c12", e.TA())
}

// auth089 AUTH-089 Per-type limit.
func auth089(c *Case) {
	e := newAuthEnv(c, authWithNA(func(l *fixture.Limits) { l.Room = 1 }))
	e.RS("c13", e.TA())
	e.requireExhausted(fixture.SpotRequest(location.ObjectUserSpot, "c14", e.TA(), "room"))
	e.RS("c15", e.TA(), "hall")
}

// auth090 AUTH-090 Type not offered.
func auth090(c *Case) {
	e := newAuthEnv(c)
	e.requireExhausted(fixture.SpotRequest(location.ObjectUserSpot, "c90", e.TA(), "arena"))
}

// auth091 AUTH-091 Per-type limit 0 is unlimited.
func auth091(c *Case) {
	e := newAuthEnv(c, authWithNA(func(l *fixture.Limits) { l.Room = 0; l.Spots = 2 }))
	e.RS("c91a", e.TA())
	e.RS("c91b", e.TA())
	e.requireExhausted(fixture.SpotRequest(location.ObjectUserSpot, "c91c", e.TA(), "room"))
}

// auth092 AUTH-092 [quirk] Overall limit 0: D-18 is fixed (0 = unlimited),
// so the ALT outcome, reserved, is expected.
func auth092(c *Case) {
	e := newAuthEnv(c, authWithNA(func(l *fixture.Limits) { l.Actors, l.Spots, l.Room = 0, 0, 0 }))
	for i := 0; i < 12; i++ {
		e.RA(fmt.Sprintf("c16-%02d", i), e.TA())
		e.RS(fmt.Sprintf("c17-%02d", i), e.TA())
	}
	e.requireU(e.NA, authUsage{Actors: authSlot{Reserved: 12}, Spots: authSlot{Reserved: 12}, Room: authSlot{Reserved: 12}})
}

// auth093 AUTH-093 [quirk] Usage is per lifecycle (D-19 kept: the reference
// outcome).
func auth093(c *Case) {
	e := newAuthEnv(c)
	e.AS("c17", e.TA())
	e.republish(e.NA, location.IntentTakeover, func(d *location.MeshNodeDescriptor) {
		d.LifecycleGeneration = 2
	})
	require.Equal(c, authUsage{}, e.U(e.NA), "a restarted node starts from empty ledgers")
	e.RS("c18", e.TA())
	e.requireU(e.NA, authUsage{Spots: authSlot{Reserved: 1}, Room: authSlot{Reserved: 1}})
}

// auth094 AUTH-094 [hook] Exhaustion comes after capacity.
func auth094(c *Case) {
	e := newAuthEnv(c, authWithNA(func(l *fixture.Limits) { l.Spots = 1 }))
	counters := []string{"version", "object", "owner"}
	set := func(which string, v int64) {
		switch which {
		case "version":
			e.setCounters(authI64(v), nil, nil)
		case "object":
			e.setCounters(nil, authI64(v), nil)
		default:
			e.setCounters(nil, nil, authI64(v))
		}
	}
	for i, which := range counters {
		// (a) node empty, counter exhausted.
		set(which, location.MaxGeneration)
		e.requireReserveRefused("reserve with the "+which+" counter exhausted", fixture.SpotRequest(location.ObjectUserSpot, "e1", e.TA(), "room"), location.KindGenerationExhausted, nil)
		// (b) node full, counter exhausted: capacity is checked first.
		set(which, 1<<62+int64(i)*1000)
		R := e.RS("e0", e.TA())
		set(which, location.MaxGeneration)
		e.requireReserveRefused("reserve on a full node with the "+which+" counter exhausted", fixture.SpotRequest(location.ObjectUserSpot, "e2", e.TA(), "room"), location.KindPlacementCapacityExhausted, nil)
		require.Equal(c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectUserSpot, "e0", R, e.TA())))
		set(which, 1<<62+int64(i)*1000+500)
	}
}

// auth095 AUTH-095 Claim beats an existing row (D-33 kept).
func auth095(c *Case) {
	e := newAuthEnv(c)
	e.AS("lobby2", e.TA())
	e.publishNode("node-c", e.B, fixture.DefaultLimits(), "lobby2")
	e.requireReserveRefused("reserve of a claimed key with a row", fixture.SpotRequest(location.ObjectInstanceSpot, "lobby2", e.TA(), "shard"), location.KindConflict, nil)
}
