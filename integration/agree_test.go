package integration

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Results agree when their shapes are equal and their numbers bind under the
// renaming (conformance.Renamer, tested in its package).
func TestAgree(t *testing.T) {
	c := call{kind: opClaim, owner: "o1"}
	claimed := func(gen int64) location.OwnerLeaseClaimResult {
		return location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: location.OwnerToken{OwnerID: "o1", LeaseGeneration: gen}}
	}
	r := conformance.NewRenamer(false)
	require.Empty(t, agree(c, claimed(1), claimed(57), r))
	require.Equal(t, int64(1), r.ToModelNumber(conformance.NSLease, 57))
	require.NotEmpty(t, agree(c, claimed(1), claimed(58), r), "1 stands for 57")
	require.NotEmpty(t, agree(c, location.OwnerLeaseClaimResult{Kind: location.KindConflict}, claimed(60), conformance.NewRenamer(false)))
	require.Equal(t, "namespaces differ: a / b", bind(r, number{ns: "a"}, number{ns: "b"}))
	// Calls are translated into the model's numbers.
	require.Equal(t, int64(1), call{kind: opRenew, token: location.OwnerToken{OwnerID: "o1", LeaseGeneration: 57}}.toModel(r).token.LeaseGeneration)
}
