package memstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// TestCancelledContext checks LS-200: every location-table method returns
// the context's error before doing anything (A-29 fixed).
func TestCancelledContext(t *testing.T) {
	f := newLSFix(t)
	a := f.claim("a")
	f.updateMN(f.mn("a"), location.IntentNewClaim)
	f.updateSpot(f.spot("a"), location.IntentNewClaim)
	_, err := f.s.PrepareActorTransfer(f.ctx, lsXfer(lsXferID))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	s := f.s
	newClaim := location.IntentNewClaim
	calls := map[string]func() error{
		"UpdateMeshNode": func() error { _, err := s.UpdateMeshNode(ctx, f.mn("a"), location.IntentTakeover); return err },
		"RemoveMeshNode": func() error { _, err := s.RemoveMeshNode(ctx, lsKA(), a); return err },
		"ListMeshNodes":  func() error { _, err := s.ListMeshNodes(ctx, "game", location.PageRequest{}); return err },
		"UpdateClientServer": func() error {
			_, err := s.UpdateClientServer(ctx, f.cs("a"), newClaim)
			return err
		},
		"RemoveClientServer": func() error {
			_, err := s.RemoveClientServer(ctx, location.ClientServerKey{ChannelName: "orders", ServerRID: "srv-a"}, a)
			return err
		},
		"ListClientServers": func() error { _, err := s.ListClientServers(ctx, "orders", location.PageRequest{}); return err },
		"UpdateFanoutPublisher": func() error {
			_, err := s.UpdateFanoutPublisher(ctx, f.fp("a"), newClaim)
			return err
		},
		"RemoveFanoutPublisher": func() error {
			_, err := s.RemoveFanoutPublisher(ctx, location.FanoutPublisherKey{ChannelName: "events", PublisherRID: "pub-a"}, a)
			return err
		},
		"ListFanoutPublishers": func() error { _, err := s.ListFanoutPublishers(ctx, "events", location.PageRequest{}); return err },
		"UpdatePeer":           func() error { _, err := s.UpdatePeer(ctx, lsPeer("a", 0), newClaim); return err },
		"RemovePeer":           func() error { _, err := s.RemovePeer(ctx, lsPK(), a); return err },
		"ListPeers":            func() error { _, err := s.ListPeers(ctx, location.PeerFilter{}); return err },
		"UpdateSpot":           func() error { _, err := s.UpdateSpot(ctx, f.spot("a"), location.IntentTakeover); return err },
		"RemoveSpot":           func() error { _, err := s.RemoveSpot(ctx, lsSpotKey(), a); return err },
		"ResolveSpot":          func() error { _, err := s.ResolveSpot(ctx, lsSpotKey()); return err },
		"ListSpots":            func() error { _, err := s.ListSpots(ctx, location.SpotFilter{}, location.PageRequest{}); return err },
		"UpdateActor":          func() error { _, err := s.UpdateActor(ctx, f.actor("a"), newClaim); return err },
		"RemoveActor":          func() error { _, err := s.RemoveActor(ctx, lsActorKey(), a); return err },
		"ResolveActor":         func() error { _, err := s.ResolveActor(ctx, lsActorKey()); return err },
		"ListActors":           func() error { _, err := s.ListActors(ctx, location.ActorFilter{}, location.PageRequest{}); return err },
		"UpdateRoute":          func() error { _, err := s.UpdateRoute(ctx, lsRoute("a", 0), newClaim); return err },
		"RemoveRoute":          func() error { _, err := s.RemoveRoute(ctx, lsRouteKey(), a); return err },
		"ResolveRoute":         func() error { _, err := s.ResolveRoute(ctx, lsRouteKey()); return err },
		"ListRoutes":           func() error { _, err := s.ListRoutes(ctx, location.RouteFilter{}, location.PageRequest{}); return err },
		"ClaimOwnerLease":      func() error { _, err := s.ClaimOwnerLease(ctx, "b", time.Second); return err },
		"ReadOwnerLease":       func() error { _, err := s.ReadOwnerLease(ctx, "a"); return err },
		"RenewOwnerLease":      func() error { _, err := s.RenewOwnerLease(ctx, a, time.Second); return err },
		"ReleaseOwnerLease":    func() error { _, err := s.ReleaseOwnerLease(ctx, a); return err },
		"RemoveAllByOwner":     func() error { _, err := s.RemoveAllByOwner(ctx, a); return err },
		"PrepareActorTransfer": func() error { _, err := s.PrepareActorTransfer(ctx, lsXfer(lsXfer2ID)); return err },
		"CommitActorTransfer":  func() error { _, err := s.CommitActorTransfer(ctx, lsRef(lsXferID), "recovery-a"); return err },
		"ActivateActorTransfer": func() error {
			_, err := s.ActivateActorTransfer(ctx, lsRef(lsXferID), "recovery-a")
			return err
		},
		"AbortActorTransfer": func() error { _, err := s.AbortActorTransfer(ctx, lsRef(lsXferID), "recovery-a"); return err },
		"TakeOverActorTransfer": func() error {
			_, err := s.TakeOverActorTransfer(ctx, lsRef(lsXferID), "recovery-b", time.Second)
			return err
		},
		"ResolveActorTransfer": func() error { _, err := s.ResolveActorTransfer(ctx, "game", "actor-1"); return err },
		"GetChangeStamp": func() error {
			_, err := s.GetChangeStamp(ctx, location.ChangeStampScope{Kind: location.LocationPeer.Scope()})
			return err
		},
		"GetMeshNodeChangeStamp": func() error { _, _, err := s.GetMeshNodeChangeStamp(ctx, "game"); return err },
		"WatchChanges":           func() error { _, err := s.WatchChanges(ctx); return err },
		"ExpireOwnerLease":       func() error { return s.ExpireOwnerLease(ctx, "a") },
	}
	for name, call := range calls {
		t.Run("LS-200 "+name, func(t *testing.T) {
			f.noEffect(func() { require.ErrorIs(t, call(), context.Canceled) })
		})
	}
	t.Run("invalid input wins over nothing but the context", func(t *testing.T) {
		bad := f.mn("a")
		bad.MeshName = ""
		_, err := s.UpdateMeshNode(ctx, bad, newClaim)
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, location.ErrInvalidArgument)
	})
}

// TestUnknownWriteIntent checks LS-207 (A-31 fixed in Go): an intent outside
// 1..3 is a Range error and changes nothing.
func TestUnknownWriteIntent(t *testing.T) {
	f := newLSFix(t)
	f.claim("a")
	for _, intent := range []location.WriteIntent{0, 4} {
		calls := map[string]func() error{
			"UpdateMeshNode":        func() error { _, err := f.s.UpdateMeshNode(f.ctx, f.mn("a"), intent); return err },
			"UpdateClientServer":    func() error { _, err := f.s.UpdateClientServer(f.ctx, f.cs("a"), intent); return err },
			"UpdateFanoutPublisher": func() error { _, err := f.s.UpdateFanoutPublisher(f.ctx, f.fp("a"), intent); return err },
			"UpdatePeer":            func() error { _, err := f.s.UpdatePeer(f.ctx, lsPeer("a", 0), intent); return err },
			"UpdateSpot":            func() error { _, err := f.s.UpdateSpot(f.ctx, f.spot("a"), intent); return err },
			"UpdateActor":           func() error { _, err := f.s.UpdateActor(f.ctx, f.actor("a"), intent); return err },
			"UpdateRoute":           func() error { _, err := f.s.UpdateRoute(f.ctx, lsRoute("a", 0), intent); return err },
		}
		for name, call := range calls {
			t.Run(fmt.Sprintf("LS-207 %s intent %d", name, intent), func(t *testing.T) {
				f.noEffect(func() { requireInputError(t, call(), location.ClassRange) })
			})
		}
	}
}

// TestCallerTimestampsIgnored checks LS-204 on every row table.
func TestCallerTimestampsIgnored(t *testing.T) {
	f := newLSFix(t)
	f.claim("a")
	old := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
	newClaim := location.IntentNewClaim
	cs := f.cs("a")
	cs.UpdatedAt = old
	fp := f.fp("a")
	fp.UpdatedAt = old
	p := lsPeer("a", 0)
	p.UpdatedAt = old
	s := f.spot("a")
	s.UpdatedAt = old
	a := f.actor("a")
	a.UpdatedAt = old
	r := lsRoute("a", 0)
	r.UpdatedAt = old
	for _, res := range []location.WriteResult{f.updateCS(cs, newClaim), f.updateFP(fp, newClaim), f.updatePeer(p, newClaim), f.updateSpot(s, newClaim), f.updateActor(a, newClaim), f.updateRoute(r, newClaim)} {
		require.Equal(t, lsStored(1, lsT0()), res, "LS-204")
	}
	require.Equal(t, lsT0(), f.clientServers("orders")[0].UpdatedAt)
	require.Equal(t, lsT0(), f.fanouts("events")[0].UpdatedAt)
	require.Equal(t, lsT0(), f.peers(location.PeerFilter{})[0].UpdatedAt)
	require.Equal(t, lsT0(), f.resolveSpot(lsSpotKey()).UpdatedAt)
	require.Equal(t, lsT0(), f.resolveActor(lsActorKey()).UpdatedAt)
	require.Equal(t, lsT0(), f.resolveRoute(lsRouteKey()).UpdatedAt)
}

// TestConcurrentClaims checks LS-206: concurrent NewClaims of one fresh key
// by two live owners yield exactly one Stored(1) and one RejectedConflict.
func TestConcurrentClaims(t *testing.T) {
	f := newLSFix(t)
	f.claim("a")
	f.claim("b")
	for i := range 50 {
		id := fmt.Sprintf("spot-%02d", i)
		var wg sync.WaitGroup
		results := map[string]location.WriteResult{}
		var mu sync.Mutex
		for _, owner := range []string{"a", "b"} {
			wg.Go(func() {
				s := f.spot(owner)
				s.SpotID = id
				res, err := f.s.UpdateSpot(f.ctx, s, location.IntentNewClaim)
				if err != nil {
					res = location.WriteResult{}
				}
				mu.Lock()
				results[owner] = res
				mu.Unlock()
			})
		}
		wg.Wait()
		var winner string
		for owner, res := range results {
			switch res {
			case lsStored(1, lsT0()):
				require.Empty(t, winner, "LS-206 %s: two winners", id)
				winner = owner
			default:
				require.Equal(t, lsConflict(), res, "LS-206 %s", id)
			}
		}
		require.NotEmpty(t, winner, "LS-206 %s: no winner", id)
		require.Equal(t, winner, f.resolveSpot(location.SpotKey{MeshName: "play", SpotID: id}).OwnerID)
	}
}

// TestParallelWriters runs many writers and readers at once (run with
// -race): every table sees concurrent writes, and the stamps count exactly
// one bump per stored write.
func TestParallelWriters(t *testing.T) {
	f := newLSFix(t)
	const workers, rounds = 8, 25
	owners := make([]location.OwnerToken, workers)
	for i := range owners {
		owners[i] = f.claim(fmt.Sprintf("owner-%d", i))
	}
	var wg sync.WaitGroup
	stored := make([]int, workers)
	for w := range workers {
		wg.Go(func() {
			owner := owners[w].OwnerID
			for r := range rounds {
				id := fmt.Sprintf("w%d-r%02d", w, r)
				s := lsSpotRow(owner, owners[w].LeaseGeneration)
				s.SpotID = id
				p := lsPeer(owner, 0)
				p.NodeRID = lsPtr(location.RoutingID(id))
				shared := lsSpotRow(owner, owners[w].LeaseGeneration)
				shared.SpotID = "contended"
				for _, write := range []func() (location.WriteResult, error){
					func() (location.WriteResult, error) { return f.s.UpdateSpot(f.ctx, s, location.IntentNewClaim) },
					func() (location.WriteResult, error) { return f.s.UpdatePeer(f.ctx, p, location.IntentNewClaim) },
					func() (location.WriteResult, error) { return f.s.UpdateSpot(f.ctx, shared, location.IntentTakeover) },
				} {
					res, err := write()
					if err == nil && res.Status == location.Stored {
						stored[w]++
					}
				}
				_, _ = f.s.ListSpots(f.ctx, location.SpotFilter{}, location.PageRequest{PageSize: 3})
				_, _ = f.s.ListPeers(f.ctx, location.PeerFilter{})
			}
		})
	}
	wg.Wait()
	total := 0
	for _, n := range stored {
		total += n
	}
	require.Equal(t, 3*workers*rounds, total, "every write is a fresh NewClaim or a Takeover")
	require.Equal(t, int64(2*workers*rounds), f.stamp(location.LocationSpot, ""))
	require.Equal(t, int64(workers*rounds), f.stamp(location.LocationPeer, ""))
	res := f.updateSpot(func() location.SpotLocation {
		s := lsSpotRow("owner-0", owners[0].LeaseGeneration)
		s.SpotID = "contended"
		return s
	}(), location.IntentTakeover)
	require.Equal(t, lsStored(int64(workers*rounds+1), lsT0()), res, "the contended key's generation counts every takeover")
}

// TestFailurePayload checks LS-205: every IgnoredStale and RejectedConflict
// result carries generation 0 and the Unix epoch.
func TestFailurePayload(t *testing.T) {
	f := newLSFix(t)
	f.claim("a")
	f.claim("b")
	f.updateMN(f.mn("a"), location.IntentNewClaim)
	f.updatePeer(lsPeer("a", 0), location.IntentNewClaim)
	f.updateSpot(f.spot("a"), location.IntentNewClaim)
	f.updateRoute(lsRoute("a", 0), location.IntentNewClaim)
	removed, err := f.s.RemovePeer(f.ctx, lsPK(), location.OwnerToken{OwnerID: "a", LeaseGeneration: 9})
	require.NoError(t, err)
	for i, res := range []location.WriteResult{
		f.updateMN(f.mn("ghost"), location.IntentNewClaim),
		f.updateMN(f.mn("b"), location.IntentNewClaim),
		f.updateCS(f.cs("a"), location.IntentRenew),
		f.updatePeer(lsPeer("b", 0), location.IntentNewClaim),
		f.updatePeer(lsPeer("a", 7), location.IntentRenew),
		f.updateSpot(f.spot("b"), location.IntentNewClaim),
		f.updateRoute(lsRoute("b", 0), location.IntentNewClaim),
		removed,
	} {
		require.NotEqual(t, location.Stored, res.Status, "case %d", i)
		require.Zero(t, res.Generation, "LS-205 case %d", i)
		require.Equal(t, time.UnixMilli(0).UTC(), res.UpdatedAt, "LS-205 case %d", i)
	}
}
