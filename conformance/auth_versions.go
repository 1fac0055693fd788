package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section C of the authority catalogue: store versions and generations
// (04 §1.3, §1.4). Versions are compared only by equality (catalogue §0.2).

// auth017 AUTH-017 Reserve and commit issue versions, keep generations.
func auth017(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("v1", e.TA())
	S := e.requireCommitKind(e.commit(fixture.CommitRequest("v1", R, e.TA())), location.KindCommitted)
	require.NotEqual(c, R.Creating.StoreVersion, S.StoreVersion)
	require.Equal(c, R.Creating.ObjectGeneration, S.ObjectGeneration)
	require.GreaterOrEqual(c, S.ObjectGeneration, int64(1))
	require.Equal(c, R.Creating.AuthorityOwnerGeneration, S.AuthorityOwnerGeneration)
	require.GreaterOrEqual(c, S.AuthorityOwnerGeneration, int64(1))
	e.exactVersion(R.Creating.StoreVersion, "1", "reserve")
	e.exactVersion(S.StoreVersion, "2", "commit")
	e.exactGenerations(S, 1, "")
}

// auth018 AUTH-018 Every write, a new version.
func auth018(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("v2")
	seen := map[location.StoreVersion]bool{S.StoreVersion: true}
	for i := 0; i < 3; i++ {
		next := e.requireStored(e.cas(key, S.StoreVersion, fixture.Preserve("p")))
		e.exactVersion(next.StoreVersion, []string{"3", "4", "5"}[i], "preserve")
		require.False(c, seen[next.StoreVersion], "version %q issued twice", next.StoreVersion)
		seen[next.StoreVersion] = true
		require.Equal(c, next.StoreVersion, e.read(key).Snapshot.StoreVersion, "the CAS returned the version later read")
		S = next
	}
	require.Len(c, seen, 4)
}

// auth019 AUTH-019 Re-creation raises generations.
func auth019(c *Case) {
	e := newAuthEnv(c)
	key := fixture.KS("v3")
	R1 := e.RS("v3", e.TA())
	S1 := e.requireCommitKind(e.commit(fixture.CommitRequest("v3", R1, e.TA())), location.KindCommitted)
	del := e.requireDeleted(e.cas(key, S1.StoreVersion, fixture.Delete()))
	S2 := e.AS("v3", e.TA())
	require.Greater(c, S2.ObjectGeneration, S1.ObjectGeneration)
	require.Greater(c, S2.AuthorityOwnerGeneration, S1.AuthorityOwnerGeneration)
	require.NotContains(c, []location.StoreVersion{R1.Creating.StoreVersion, S1.StoreVersion, del.DeletedVersion}, S2.StoreVersion)
	e.exactVersion(del.DeletedVersion, "3", "delete")
	e.exactVersion(S2.StoreVersion, "5", "re-created row")
	e.exactGenerations(S2, 2, "re-created ")
}

// auth020 AUTH-020 Versions compare as exact strings.
func auth020(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("v4")
	for _, v := range []location.StoreVersion{"0" + S.StoreVersion, S.StoreVersion + " ", "abc"} {
		e.requireCASConflict("CAS with version "+string(v), key, v, fixture.Preserve("x"), S)
	}
}

// auth021 AUTH-021 Payload-only writes keep generations.
func auth021(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("v5")
	S1 := e.requireStored(e.cas(key, S.StoreVersion, fixture.Preserve("one")))
	S2 := e.requireStored(e.cas(key, S1.StoreVersion, fixture.Restore("two", e.A)))
	for _, got := range []*location.AuthoritySnapshot{S1, S2} {
		require.Equal(c, S.ObjectGeneration, got.ObjectGeneration)
		require.Equal(c, S.AuthorityOwnerGeneration, got.AuthorityOwnerGeneration)
		require.Equal(c, S.Owner, got.Owner)
		require.Equal(c, S.Allocation, got.Allocation)
	}
}
