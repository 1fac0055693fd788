package memstore

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestParseOffset checks the reference's parseInt rules for tokens (02 §1.5).
func TestParseOffset(t *testing.T) {
	for _, c := range []struct {
		token string
		want  int
	}{
		{"", 0}, {"0", 0}, {"2", 2}, {"2x", 2}, {" 3", 3}, {"\t\n\u00a0\ufeff\u20284", 4}, {"+1", 1},
		{"-1", 0}, {"-0", 0}, {"abc", 0}, {"1e3", 1}, {"0x10", 0}, {"007", 7}, {"+", 0}, {"- 1", 0},
		{"1 2", 1}, {"\u00855", 0}, {"99999999999999999999999", math.MaxInt}, {"١", 0},
	} {
		t.Run(fmt.Sprintf("%q", c.token), func(t *testing.T) {
			require.Equal(t, c.want, parseOffset(c.token))
		})
	}
}

// TestOffsetTokens checks memstore's continuation tokens: decimal offsets
// parsed like the reference's parseInt, so a token that is not a number
// restarts the list and an offset past the end gives an empty page.
func TestOffsetTokens(t *testing.T) {
	f := newMemFix(t)
	for _, id := range []string{"spot-2", "spot-1"} {
		f.stored(f.s.UpdateSpot(f.ctx, spotAt("a", 1, fixture.MeshPlay, id), location.IntentNewClaim))
	}
	play := location.SpotFilter{MeshName: &[]string{fixture.MeshPlay}[0]}
	for _, c := range []struct {
		page      location.PageRequest
		ids       []string
		nextToken string
	}{
		{location.PageRequest{PageSize: 1}, []string{"spot-1"}, "1"},
		{location.PageRequest{PageSize: 1, ContinuationToken: "1"}, []string{"spot-2"}, ""},
		{location.PageRequest{PageSize: 1, ContinuationToken: "abc"}, []string{"spot-1"}, "1"},
		{location.PageRequest{PageSize: 1, ContinuationToken: "-1"}, []string{"spot-1"}, "1"},
		{location.PageRequest{PageSize: 5, ContinuationToken: "2x"}, nil, ""},
		{location.PageRequest{ContinuationToken: "1"}, []string{"spot-2"}, ""},
	} {
		page, err := f.s.ListSpots(f.ctx, play, c.page)
		require.NoError(t, err)
		var ids []string
		for _, s := range page.Items {
			ids = append(ids, s.SpotID)
		}
		require.Equal(t, c.ids, ids, "%+v", c.page)
		require.Equal(t, c.nextToken, page.ContinuationToken, "%+v", c.page)
	}
	page, err := f.s.ListSpots(f.ctx, play, location.PageRequest{ContinuationToken: "99"})
	require.NoError(t, err)
	require.Equal(t, location.Page[location.SpotLocation]{Items: []location.SpotLocation{}}, page, "an offset past the end is an empty page")
}

// TestListsFollowKeyOrder checks that lists are in the order of the rows'
// canonical keys, which are length-prefixed: the 4-byte mesh play sorts
// before the 5-byte mesh other, and routes sort by kind first.
func TestListsFollowKeyOrder(t *testing.T) {
	f := newMemFix(t)
	for _, s := range []location.SpotLocation{
		spotAt("a", 1, "other", "spot-3"), spotAt("a", 1, fixture.MeshPlay, "spot-2"), spotAt("a", 1, fixture.MeshPlay, "spot-1"),
	} {
		f.stored(f.s.UpdateSpot(f.ctx, s, location.IntentNewClaim))
	}
	spots, err := f.s.ListSpots(f.ctx, location.SpotFilter{}, location.PageRequest{})
	require.NoError(t, err)
	var got []string
	for _, s := range spots.Items {
		got = append(got, s.MeshName+"/"+s.SpotID)
	}
	require.Equal(t, []string{"play/spot-1", "play/spot-2", "other/spot-3"}, got)

	for _, x := range []struct{ mesh, id string }{{"other", "actor-2"}, {fixture.MeshPlay, "actor-3"}, {fixture.MeshPlay, "actor-1"}} {
		a := fixture.ACTOR("a", 1)
		a.MeshName, a.ActorID, a.ActorRef.ActorID, a.ActorRef.MeshName = x.mesh, x.id, x.id, x.mesh
		f.stored(f.s.UpdateActor(f.ctx, a, location.IntentNewClaim))
	}
	actors, err := f.s.ListActors(f.ctx, location.ActorFilter{}, location.PageRequest{})
	require.NoError(t, err)
	got = nil
	for _, a := range actors.Items {
		got = append(got, a.MeshName+"/"+a.ActorID)
	}
	require.Equal(t, []string{"play/actor-1", "play/actor-3", "other/actor-2"}, got)

	for _, x := range []struct {
		kind location.RouteKind
		key  string
	}{{location.RouteSpotName, "r2"}, {location.RouteActorSession, "r3"}, {location.RouteActorSession, "r1"}} {
		r := fixture.ROUTE("a", 0)
		r.RouteKind, r.RouteKey = x.kind, x.key
		f.stored(f.s.UpdateRoute(f.ctx, r, location.IntentNewClaim))
	}
	routes, err := f.s.ListRoutes(f.ctx, location.RouteFilter{}, location.PageRequest{})
	require.NoError(t, err)
	got = nil
	for _, r := range routes.Items {
		got = append(got, r.RouteKey)
	}
	require.Equal(t, []string{"r1", "r3", "r2"}, got)
}
