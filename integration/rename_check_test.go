package integration

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The renaming binds model and store numbers one to one, keeps the order of
// ordered namespaces, and compares special numbers exactly.
func TestRenaming(t *testing.T) {
	tests := []struct {
		name  string
		binds [][2]int64 // model, store, in order, in one ordered namespace
		fail  bool
	}{
		{name: "consistent", binds: [][2]int64{{1, 40}, {2, 57}, {1, 40}}},
		{name: "model number rebound", binds: [][2]int64{{1, 40}, {1, 41}}, fail: true},
		{name: "store number rebound", binds: [][2]int64{{1, 40}, {2, 40}}, fail: true},
		{name: "order broken", binds: [][2]int64{{1, 40}, {2, 30}}, fail: true},
		{name: "order kept when bound out of order", binds: [][2]int64{{3, 90}, {1, 40}, {2, 57}}},
		{name: "special numbers exact", binds: [][2]int64{{0, 0}, {-1, -1}}},
		{name: "special number renamed", binds: [][2]int64{{0, 12}}, fail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRenaming()
			failed := false
			for _, b := range tc.binds {
				if d := r.bind(number{ns: nsLease, ordered: true, i: b[0]}, number{ns: nsLease, ordered: true, i: b[1]}); d != "" {
					failed = true
				}
			}
			require.Equal(t, tc.fail, failed)
		})
	}
	t.Run("a clone does not see later bindings", func(t *testing.T) {
		r := newRenaming()
		require.Empty(t, r.bindStr(nsReservation, "m1", "s1"))
		c := r.clone()
		require.Empty(t, c.bindStr(nsReservation, "m2", "s2"))
		require.Equal(t, "m2", c.modelStr(nsReservation, "s2"))
		require.Equal(t, "unbound:s2", r.modelStr(nsReservation, "s2"))
		require.Equal(t, "m1", r.modelStr(nsReservation, "s1"))
	})
}

// Results agree when their shapes are equal and their numbers bind.
func TestAgree(t *testing.T) {
	c := call{kind: opClaim, owner: "o1"}
	claimed := func(gen int64) location.OwnerLeaseClaimResult {
		return location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: location.OwnerToken{OwnerID: "o1", LeaseGeneration: gen}}
	}
	r := newRenaming()
	require.Empty(t, agree(c, claimed(1), claimed(57), r))
	require.Equal(t, int64(1), r.modelInt(nsLease, 57))
	require.NotEmpty(t, agree(c, claimed(1), claimed(58), r), "1 stands for 57")
	require.NotEmpty(t, agree(c, location.OwnerLeaseClaimResult{Kind: location.KindConflict}, claimed(60), newRenaming()))
	// Calls are translated into the model's numbers.
	require.Equal(t, int64(1), call{kind: opRenew, token: location.OwnerToken{OwnerID: "o1", LeaseGeneration: 57}}.toModel(r).token.LeaseGeneration)
}
