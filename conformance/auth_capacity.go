package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section V of the authority catalogue: capacity observation through
// listMeshNodes (04 §1.6, §2.15).

// auth193 AUTH-193 Store usage replaces published usage.
func auth193(c *Case) {
	e := newAuthEnv(c)
	e.republish(e.NA, location.IntentRenew, func(d *location.MeshNodeDescriptor) {
		d.DescriptorRevision = 2
		d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 5, Reserved: 5, Limit: 10}
	})
	for _, d := range e.listNodes() {
		if d.RID == e.NA.Desc.RID {
			require.Equal(c, location.PopulationCapacity{Active: 0, Reserved: 0, Limit: 10}, d.PopulationCapacity.Actors)
			require.True(c, authUsageOf(d).zero(), "U(NA) is the store's usage: %+v", authUsageOf(d))
			return
		}
	}
	require.FailNow(c, "NA is not listed")
}

// auth194 AUTH-194 Typed buckets are separate.
func auth194(c *Case) {
	e := newAuthEnv(c)
	e.RS("u1", e.TA())
	e.RI("u2", e.TA())
	e.requireU(e.NA, authUsage{
		Spots: authSlot{Reserved: 2},
		Room:  authSlot{Reserved: 1},
		Shard: authSlot{Reserved: 1},
	})
}

// auth195 AUTH-195 Actor and spot buckets are separate.
func auth195(c *Case) {
	e := newAuthEnv(c)
	e.RA("u3", e.TA())
	e.RS("u4", e.TA())
	e.requireU(e.NA, authUsage{
		Actors: authSlot{Reserved: 1},
		Spots:  authSlot{Reserved: 1},
		Room:   authSlot{Reserved: 1},
	})
}

// auth196 AUTH-196 No re-check after admission.
func auth196(c *Case) {
	e := newAuthEnv(c)
	R5 := e.RS("u5", e.TA())
	R6 := e.RS("u6", e.TA())
	e.republish(e.NA, location.IntentRenew, func(d *location.MeshNodeDescriptor) {
		d.DescriptorRevision = 2
		d.PopulationCapacity.SpotTypes[0].Limit = 1 // user_spot/room
	})
	e.requireCommitKind(e.commit(fixture.CommitRequest("u5", R5, e.TA())), location.KindCommitted)
	e.requireCommitKind(e.commit(fixture.CommitRequest("u6", R6, e.TA())), location.KindCommitted)
	e.requireExhausted(fixture.SpotRequest(location.ObjectUserSpot, "u7", e.TA(), "room"))
}

// auth197 AUTH-197 Every exit returns capacity exactly once.
func auth197(c *Case) {
	e := newAuthEnv(c)
	ua, ub := e.U(e.NA), e.U(e.NB)
	back := func(cycle string) {
		c.Helper()
		require.Equal(c, ua, e.U(e.NA), "U(NA) after %s", cycle)
		require.Equal(c, ub, e.U(e.NB), "U(NB) after %s", cycle)
	}

	R := e.RS("cy1", e.TA())
	require.Equal(c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectUserSpot, "cy1", R, e.TA())))
	back("reserve → abort")

	S := e.AS("cy2", e.TA())
	e.requireDeleted(e.cas(fixture.KS("cy2"), S.StoreVersion, fixture.Delete()))
	back("reserve → commit → delete")

	Ra := e.RA("cy3", e.TA())
	e.requireCompleteKind(e.complete(fixture.CompleteRequest("cy3", Ra, e.TA(), location.TerminalRejected, fixture.P(fixture.OP(197), authDeadline()))), location.KindRejected)
	back("reserve → rejected")

	Rf := e.RA("cy3f", e.TA())
	e.requireCompleteKind(e.complete(fixture.CompleteRequest("cy3f", Rf, e.TA(), location.TerminalFailed, fixture.P(fixture.OP(198), authDeadline()))), location.KindFailed)
	back("reserve → failed")

	Sm := e.AS("cy4", e.TA())
	e.REL("Rcy4", fixture.KS("cy4"), Sm, e.NA, e.NB)
	moved := e.requireStored(e.cas(fixture.KS("cy4"), Sm.StoreVersion, fixture.NewOwner("moved", e.B, "Rcy4")))
	e.requireDeleted(e.cas(fixture.KS("cy4"), moved.StoreVersion, fixture.Delete()))
	back("reserve → commit → move → delete")

	_, created := e.AA("cy5", e.TA(), 199)
	e.requireDeleted(e.cas(fixture.KA("cy5"), created.Ready.StoreVersion, fixture.Delete()))
	back("actor reserve → created → delete")
}
