package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Sections D–H of the authority catalogue: compareExchangeAuthority's gate
// and validation, delete, rebindOwnerLease, restore and put/preserve
// (04 §2.2).

// auth022 AUTH-022 Missing row.
func auth022(c *Case) {
	e := newAuthEnv(c)
	key := fixture.KS("ghost")
	other := location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: e.A.LeaseGeneration + 1}
	muts := []location.AuthorityMutation{
		fixture.Preserve("p"),
		fixture.Restore("p", e.A),
		fixture.Rebind("p", e.A, other),
		fixture.Delete(),
		fixture.NewOwner("p", e.B, "f"),
	}
	for _, m := range muts {
		e.unchanged("CAS "+string(m.Kind)+" on a missing row", func() {
			r := e.cas(key, "1", m)
			e.requireConflict(r, nil)
			require.Equal(c, T0(), r.Current.StoreNow)
		})
	}
}

// auth023 AUTH-023 Reserved rows are not CAS-able.
func auth023(c *Case) {
	e := newAuthEnv(c)
	key := fixture.KS("g1")
	R := e.RS("g1", e.TA())
	for _, m := range []location.AuthorityMutation{fixture.Preserve("p"), fixture.Delete(), fixture.Restore("p", e.A)} {
		e.unchanged("CAS "+string(m.Kind)+" on a reserved row", func() {
			e.requireConflict(e.cas(key, R.Creating.StoreVersion, m), R.Creating)
		})
	}
	e.requireRow(key, R.Creating)
}

// auth024 AUTH-024 Wrong version.
func auth024(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("g2", e.TA())
	other := e.AS("g2x", e.TA())
	e.requireCASConflict("CAS with another row's version", fixture.KS("g2"), other.StoreVersion, fixture.Preserve("p"), S)
}

// auth025 AUTH-025 Put shape validation.
func auth025(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("g25", e.TA())
	fence := location.RelocationFence("f")
	b := e.B
	shapes := map[string]location.AuthorityMutation{
		"preserve with targetOwner":      {Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: []byte("p"), TargetOwner: &b},
		"preserve with fence":            {Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: []byte("p"), RelocationFence: &fence},
		"newOwner without fence":         {Kind: location.MutationPut, Transition: location.TransitionNewOwner, Payload: []byte("p"), TargetOwner: &b},
		"newOwner without target":        {Kind: location.MutationPut, Transition: location.TransitionNewOwner, Payload: []byte("p"), RelocationFence: &fence},
		"put of an unknown transition":   {Kind: location.MutationPut, Transition: "move", Payload: []byte("p")},
		"restore without expected owner": {Kind: location.MutationRestore, Payload: []byte("p")},
		"rebind without expected owner":  {Kind: location.MutationRebindOwnerLease, Payload: []byte("p"), TargetOwner: &b},
	}
	for name, m := range shapes {
		for _, target := range []struct {
			key location.AuthorityKey
			v   location.StoreVersion
		}{{fixture.KS("g25"), S.StoreVersion}, {fixture.KS("g25-missing"), "1"}} {
			e.requireInvalid(name+" on "+string(target.key), location.ClassType, location.CodeAuthorityMutationShape, func() error { return errOf(c.S.CompareExchangeAuthority(c.Ctx, target.key, target.v, m)) })
		}
	}
}

// auth026 AUTH-026 Rebind shape validation.
func auth026(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("g26", e.TA())
	g := e.A.LeaseGeneration
	tok := func(id string, gen int64) location.OwnerToken {
		return location.OwnerToken{OwnerID: id, LeaseGeneration: gen}
	}
	cases := map[string][2]location.OwnerToken{
		"owner ids differ":             {tok("owner-a", g), tok("owner-b", g+1)},
		"equal lease generations":      {tok("owner-a", g), tok("owner-a", g)},
		"expected lease generation 0":  {tok("owner-a", 0), tok("owner-a", g)},
		"target lease generation 0":    {tok("owner-a", g), tok("owner-a", 0)},
		"negative expected generation": {tok("owner-a", -1), tok("owner-a", g)},
	}
	for name, owners := range cases {
		e.requireInvalid("rebind: "+name, location.ClassType, location.CodeAuthorityMutationShape, func() error {
			return errOf(c.S.CompareExchangeAuthority(c.Ctx, fixture.KS("g26"), S.StoreVersion, fixture.Rebind("p", owners[0], owners[1])))
		})
	}
}

// auth027 AUTH-027 Payload size (right version).
func auth027(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("g3")
	empty := fixture.Preserve("")
	empty.Payload = []byte{}
	S1 := e.requireStored(e.cas(key, S.StoreVersion, empty))
	require.Empty(c, S1.Payload)
	full := fixture.Preserve("")
	full.Payload = fixture.Bytes(fixture.MiB, 'p')
	S2 := e.requireStored(e.cas(key, S1.StoreVersion, full))
	require.Len(c, S2.Payload, fixture.MiB)
	e.unchanged("an oversized preserve", func() {
		over := fixture.Preserve("")
		over.Payload = fixture.Bytes(fixture.MiB+1, 'p')
		_, err := c.S.CompareExchangeAuthority(c.Ctx, key, S2.StoreVersion, over)
		c.expectInputErrorCode(err, location.ClassRange, location.CodeAuthorityPayload, "preserve of 1 MiB + 1")
		A2 := location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: e.A.LeaseGeneration + 1}
		for _, m := range []location.AuthorityMutation{fixture.Restore("", e.A), fixture.Rebind("", e.A, A2)} {
			m.Payload = fixture.Bytes(fixture.MiB+1, 'o')
			_, err := c.S.CompareExchangeAuthority(c.Ctx, key, S2.StoreVersion, m)
			c.expectInputErrorCode(err, location.ClassRange, location.CodeAuthorityPayload, "oversized %s", m.Kind)
		}
	})
	e.requireRow(key, S2)
}

// auth028 AUTH-028 [quirk] Oversized payload with a wrong version: D-02 is
// fixed (validation first), so the ALT outcome, invalid argument, is expected.
func auth028(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("g28")
	e.requireStored(e.cas(key, S.StoreVersion, fixture.Preserve("next"))) // S.StoreVersion is now stale
	A2 := location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: e.A.LeaseGeneration + 1}
	for _, m := range []location.AuthorityMutation{fixture.Preserve(""), fixture.Restore("", e.A), fixture.Rebind("", e.A, A2)} {
		m.Payload = fixture.Bytes(fixture.MiB+1, 'o')
		e.requireInvalid("oversized "+string(m.Kind)+" with a stale version", location.ClassRange, location.CodeAuthorityPayload, func() error { return errOf(c.S.CompareExchangeAuthority(c.Ctx, key, S.StoreVersion, m)) })
	}
}

// auth029 AUTH-029 Invalid key text.
func auth029(c *Case) {
	e := newAuthEnv(c)
	e.AS("g29", e.TA())
	for _, k := range []location.AuthorityKey{"", "a\x00b"} {
		e.requireInvalid("CAS with an invalid key", location.ClassType, location.CodeAuthorityKeyText, func() error { return errOf(c.S.CompareExchangeAuthority(c.Ctx, k, "1", fixture.Preserve("p"))) })
	}
	e.requireInvalid("CAS with an undecodable key", location.ClassType, "", func() error {
		return errOf(c.S.CompareExchangeAuthority(c.Ctx, "zla1:s:3:a\x00b", "1", fixture.Preserve("p")))
	})
}

// auth030 AUTH-030 Delete an active row.
func auth030(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("d1")
	before := e.U(e.NA)
	r := e.requireDeleted(e.cas(key, S.StoreVersion, fixture.Delete()))
	require.NotEqual(c, S.StoreVersion, r.DeletedVersion)
	e.exactVersion(r.DeletedVersion, "3", "deleted version")
	require.Equal(c, T0(), r.StoreNow)
	e.requireMissing(key)
	want := before.plusRooms(0, -1)
	e.requireU(e.NA, want)
	for _, it := range e.scanAll("") {
		require.NotEqual(c, key, it.Key, "a deleted row is not listed")
	}
}

// auth031 AUTH-031 Owner lease released.
func auth031(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("d2", e.TA())
	e.release(e.A)
	e.requireCASConflict("delete with a released owner lease", fixture.KS("d2"), S.StoreVersion, fixture.Delete(), S)
}

// auth032 AUTH-032 Owner node not usable: (a) removed, (b) Draining,
// (c) restarted with another lifecycle generation, and on NB (d) taken over
// as a Client node, (e) taken over by another owner.
func auth032(c *Case) {
	e := newAuthEnv(c)
	Sa := e.AS("d3a", e.TA())
	Sb := e.AS("d3b", e.TA())
	Sc := e.AS("d3c", e.TA())
	Sd := e.AS("d3d", e.TB())
	Se := e.AS("d3e", e.TB())

	e.removeNode(e.NA, e.A)
	e.requireCASConflict("delete after removeMeshNode", fixture.KS("d3a"), Sa.StoreVersion, fixture.Delete(), Sa)
	e.publish(e.NA, location.IntentNewClaim)

	e.republish(e.NA, location.IntentRenew, func(d *location.MeshNodeDescriptor) {
		d.DescriptorRevision = 2
		d.State = location.StateDraining
	})
	e.requireCASConflict("delete while Draining", fixture.KS("d3b"), Sb.StoreVersion, fixture.Delete(), Sb)
	e.republish(e.NA, location.IntentRenew, func(d *location.MeshNodeDescriptor) {
		d.DescriptorRevision = 3
		d.State = location.StateServing
	})

	e.republish(e.NA, location.IntentTakeover, func(d *location.MeshNodeDescriptor) {
		d.LifecycleGeneration = 2
		d.DescriptorRevision = 1
	})
	e.requireCASConflict("delete after a restart with lifecycle 2", fixture.KS("d3c"), Sc.StoreVersion, fixture.Delete(), Sc)

	e.republish(e.NB, location.IntentTakeover, func(d *location.MeshNodeDescriptor) {
		d.ObjectRole = location.RoleClient
	})
	e.requireCASConflict("delete while the node is a Client", fixture.KS("d3d"), Sd.StoreVersion, fixture.Delete(), Sd)
	e.republish(e.NB, location.IntentTakeover, func(d *location.MeshNodeDescriptor) {
		d.ObjectRole = location.RoleServer
		d.OwnerID, d.LeaseGeneration = e.A.OwnerID, e.A.LeaseGeneration
	})
	e.requireCASConflict("delete while another owner publishes the node", fixture.KS("d3e"), Se.StoreVersion, fixture.Delete(), Se)
}

// auth033 AUTH-033 [time] Owner lease expired. With LeaseExpiryByClock (the
// reference profile) the boundary is checked too: B's rows are deletable at
// leaseExpiresAt − 1 ms and not at leaseExpiresAt.
func auth033(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("d4", e.TA())
	var Sb1, Sb2 *location.AuthoritySnapshot
	if c.Caps.leaseExpiryByClock() {
		Sb1 = e.AS("d4b1", e.TB())
		Sb2 = e.AS("d4b2", e.TB())
	}
	e.expire("owner-a")
	e.requireCASConflict("delete after owner-lease expiry", fixture.KS("d4"), S.StoreVersion, fixture.Delete(), S)
	if !c.Caps.leaseExpiryByClock() {
		return
	}
	c.F.Clock.Set(e.BExp.Add(-time.Millisecond))
	e.requireDeleted(e.cas(fixture.KS("d4b1"), Sb1.StoreVersion, fixture.Delete()))
	c.F.Clock.Set(e.BExp)
	e.requireCASConflict("delete at leaseExpiresAt", fixture.KS("d4b2"), Sb2.StoreVersion, fixture.Delete(), Sb2)
}

// auth034 AUTH-034 Old version after delete.
func auth034(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("d1")
	e.requireDeleted(e.cas(key, S.StoreVersion, fixture.Delete()))
	e.requireCASConflict("preserve with a deleted row's version", key, S.StoreVersion, fixture.Preserve("p"), nil)
}

// rebindSetup is AUTH-035's set-up: AS(id) → S; release A; A2 claimed;
// NA republished by A2 (lifecycle 1, NewClaim) unless republish is false.
func (e *authEnv) rebindSetup(id string, republish bool) (*location.AuthoritySnapshot, location.OwnerToken) {
	e.c.Helper()
	S := e.AS(id, e.TA())
	e.release(e.A)
	A2, _ := e.claim("owner-a")
	if republish {
		e.republish(e.NA, location.IntentNewClaim, func(d *location.MeshNodeDescriptor) {
			d.LeaseGeneration = A2.LeaseGeneration
		})
	}
	return S, A2
}

// auth035 AUTH-035 Same owner, recovered lease.
func auth035(c *Case) {
	e := newAuthEnv(c)
	S, A2 := e.rebindSetup("b1", true)
	u := e.U(e.NA)
	got := e.requireStored(e.cas(fixture.KS("b1"), S.StoreVersion, fixture.Rebind("rebound", e.A, A2)))
	require.Equal(c, A2, got.Owner)
	require.Equal(c, S.AuthorityOwnerGeneration, got.AuthorityOwnerGeneration)
	require.Equal(c, S.ObjectGeneration, got.ObjectGeneration)
	require.Equal(c, S.Allocation, got.Allocation)
	require.Equal(c, "rebound", string(got.Payload))
	require.NotEqual(c, S.StoreVersion, got.StoreVersion)
	e.exactVersion(got.StoreVersion, "3", "rebound row")
	e.requireRow(fixture.KS("b1"), got)
	e.requireU(e.NA, u)
}

// auth036 AUTH-036 Target lease not published on the node.
func auth036(c *Case) {
	e := newAuthEnv(c)
	S, A2 := e.rebindSetup("b1", false)
	e.requireCASConflict("rebind to a lease the node does not publish", fixture.KS("b1"), S.StoreVersion, fixture.Rebind("rebound", e.A, A2), S)
}

// auth037 AUTH-037 Expected owner mismatch.
func auth037(c *Case) {
	e := newAuthEnv(c)
	S, A2 := e.rebindSetup("b1", true)
	e.requireCASConflict("rebind with the wrong expected owner", fixture.KS("b1"), S.StoreVersion, fixture.Rebind("rebound", A2, e.A), S)
}

// auth038 AUTH-038 Node restarted with another lifecycle.
func auth038(c *Case) {
	e := newAuthEnv(c)
	S, A2 := e.rebindSetup("b1", false)
	e.republish(e.NA, location.IntentNewClaim, func(d *location.MeshNodeDescriptor) {
		d.LeaseGeneration = A2.LeaseGeneration
		d.LifecycleGeneration = 2
	})
	e.requireCASConflict("rebind on a node restarted with lifecycle 2", fixture.KS("b1"), S.StoreVersion, fixture.Rebind("rebound", e.A, A2), S)
}

// auth039 AUTH-039 Wrong version.
func auth039(c *Case) {
	e := newAuthEnv(c)
	S, A2 := e.rebindSetup("b1", true)
	S2 := e.requireStored(e.cas(fixture.KS("b1"), S.StoreVersion, fixture.Restore("newer", e.A)))
	e.requireCASConflict("rebind with a stale version", fixture.KS("b1"), S.StoreVersion, fixture.Rebind("rebound", e.A, A2), S2)
}

// auth040 AUTH-040 Restore rewrites payload only.
func auth040(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("s1", e.TA())
	got := e.requireStored(e.cas(fixture.KS("s1"), S.StoreVersion, fixture.Restore("restored", e.A)))
	require.NotEqual(c, S.StoreVersion, got.StoreVersion)
	e.exactVersion(got.StoreVersion, "3", "restored row")
	authRequireSameSnap(c, authWithPayload(S, "restored"), authNoVersion(got), "restore keeps everything but payload and version")
}

// auth041 AUTH-041 Restore needs no liveness.
func auth041(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("s2", e.TA())
	e.release(e.A)
	e.requireStored(e.cas(fixture.KS("s2"), S.StoreVersion, fixture.Restore("restored", e.A)))
}

// auth042 AUTH-042 Restore requires the exact owner token.
func auth042(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("s3", e.TA())
	for _, t := range []location.OwnerToken{
		{OwnerID: "owner-a", LeaseGeneration: e.A.LeaseGeneration + 100},
		{OwnerID: "owner-b", LeaseGeneration: e.A.LeaseGeneration},
	} {
		e.requireCASConflict("restore with another owner token", fixture.KS("s3"), S.StoreVersion, fixture.Restore("restored", t), S)
	}
}

// auth043 AUTH-043 Restore with a wrong version.
func auth043(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("s4", e.TA())
	S2 := e.requireStored(e.cas(fixture.KS("s4"), S.StoreVersion, fixture.Preserve("next")))
	e.requireCASConflict("restore with a stale version", fixture.KS("s4"), S.StoreVersion, fixture.Restore("restored", e.A), S2)
}

// auth044 AUTH-044 Preserve rewrites payload only.
func auth044(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("p1", e.TA())
	u := e.U(e.NA)
	got := e.requireStored(e.cas(fixture.KS("p1"), S.StoreVersion, fixture.Preserve("p")))
	require.NotEqual(c, S.StoreVersion, got.StoreVersion)
	e.exactVersion(got.StoreVersion, "3", "preserved row")
	authRequireSameSnap(c, authWithPayload(S, "p"), authNoVersion(got), "preserve keeps everything but payload and version")
	e.requireU(e.NA, u)
}

// auth045 AUTH-045 Preserve needs a live owner.
func auth045(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("p2", e.TA())
	e.release(e.A)
	e.requireCASConflict("preserve with a released owner lease", fixture.KS("p2"), S.StoreVersion, fixture.Preserve("p"), S)
}

// auth046 AUTH-046 Chained preserves; stale reuse.
func auth046(c *Case) {
	e := newAuthEnv(c)
	key := fixture.KS("p3")
	S1 := e.AS("p3", e.TA())
	S2 := e.requireStored(e.cas(key, S1.StoreVersion, fixture.Preserve("two")))
	S3 := e.requireStored(e.cas(key, S2.StoreVersion, fixture.Preserve("three")))
	e.requireCASConflict("preserve with the first version again", key, S1.StoreVersion, fixture.Preserve("again"), S3)
}

// auth047 AUTH-047 Node leaves and re-enters Serving.
func auth047(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("p4")
	e.republish(e.NA, location.IntentRenew, func(d *location.MeshNodeDescriptor) {
		d.DescriptorRevision = 2
		d.State = location.StateDraining
	})
	e.requireCASConflict("preserve while Draining", key, S.StoreVersion, fixture.Preserve("p"), S)
	e.republish(e.NA, location.IntentRenew, func(d *location.MeshNodeDescriptor) {
		d.DescriptorRevision = 3
		d.State = location.StateServing
	})
	e.requireStored(e.cas(key, S.StoreVersion, fixture.Preserve("p")))
}
