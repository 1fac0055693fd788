package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section U of the authority catalogue: removeAllByOwner's authority part
// (04 §2.14).

// auth187 AUTH-187 Remove an owner's rows.
func auth187(c *Case) {
	e := newAuthEnv(c)
	e.AS("o1", e.TA())
	e.AS("o2", e.TA())
	e.RS("o3", e.TA())
	ob := e.AS("ob", e.TB())
	require.Equal(c, int64(3+1), e.removeAll(e.A), "3 authority rows + NA's descriptor")
	for _, id := range []string{"o1", "o2", "o3"} {
		e.requireMissing(fixture.KS(id))
	}
	e.requireRow(fixture.KS("ob"), ob)
	e.publish(e.NA, location.IntentNewClaim)
	require.True(c, e.U(e.NA).zero(), "U(NA) after removal: %+v", e.U(e.NA))
}

// auth188 AUTH-188 Exact lease generation only.
func auth188(c *Case) {
	e := newAuthEnv(c)
	S1 := e.AS("o1", e.TA())
	R2 := e.RS("o2", e.TA())
	e.release(e.A)
	A2, _ := e.claim("owner-a")
	e.removeAll(A2)
	e.requireRow(fixture.KS("o1"), S1)
	e.requireRow(fixture.KS("o2"), R2.Creating)
}

// auth189 AUTH-189 Owner lease not live.
func auth189(c *Case) {
	e := newAuthEnv(c)
	e.AS("o1", e.TA())
	e.RS("o2", e.TA())
	e.release(e.A)
	e.unchanged("removeAllByOwner with a released lease", func() {
		require.Zero(c, e.removeAll(e.A))
	})
}

// auth190 AUTH-190 [time] Owner lease expired.
func auth190(c *Case) {
	e := newAuthEnv(c)
	e.AS("o1", e.TA())
	e.RS("o2", e.TA())
	e.expire("owner-a")
	e.unchanged("removeAllByOwner with an expired lease", func() {
		require.Zero(c, e.removeAll(e.A))
	})
}

// auth191 AUTH-191 Removed reservations cannot be finished (D-32 kept).
func auth191(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("o4", e.TA())
	require.Positive(c, e.removeAll(e.A))
	e.requireCommitStale(fixture.CommitRequest("o4", R, e.TA()), "commit of a removed reservation")
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "o4", R, e.TA()), location.KindStale, "abort of a removed reservation")
}

// auth192 AUTH-192 [newer][quirk] Relocation reservations survive (D-11).
func auth192(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("o5", e.TA())
	u := e.U(e.NB)
	e.REL("R5", fixture.KS("o5"), S, e.NA, e.NB)
	require.Positive(c, e.removeAll(e.A))
	e.requireMissing(fixture.KS("o5"))
	held := u.plusRooms(1, 0)
	e.requireU(e.NB, held)
	require.Equal(c, location.KindAborted, e.abortRel("R5"))
	e.requireU(e.NB, u)
}
