package memstore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestParallelWriters runs many writers and readers at once (run with
// -race): every table sees concurrent writes, and the stamps count exactly
// one bump per stored write.
func TestParallelWriters(t *testing.T) {
	f := newMemFix(t)
	const workers, rounds = 8, 25
	owners := make([]location.OwnerToken, workers)
	for i := range owners {
		owners[i] = f.claim(fmt.Sprintf("owner-%d", i))
	}
	var wg sync.WaitGroup
	stored := make([]int, workers)
	for w := range workers {
		wg.Go(func() {
			owner := owners[w]
			for r := range rounds {
				id := fmt.Sprintf("w%d-r%02d", w, r)
				s := spotAt(owner.OwnerID, owner.LeaseGeneration, fixture.MeshPlay, id)
				p := fixture.PEER(owner.OwnerID, 0)
				rid := location.RoutingID(id)
				p.NodeRID = &rid
				shared := spotAt(owner.OwnerID, owner.LeaseGeneration, fixture.MeshPlay, "contended")
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
	stamp := func(kind location.LocationKind) int64 {
		v, err := f.s.GetChangeStamp(f.ctx, location.ChangeStampScope{Kind: kind.Scope()})
		require.NoError(t, err)
		return v
	}
	require.Equal(t, int64(2*workers*rounds), stamp(location.LocationSpot))
	require.Equal(t, int64(workers*rounds), stamp(location.LocationPeer))
	res := f.stored(f.s.UpdateSpot(f.ctx, spotAt("owner-0", owners[0].LeaseGeneration, fixture.MeshPlay, "contended"), location.IntentTakeover))
	require.Equal(t, int64(workers*rounds+1), res.Generation, "the contended key's generation counts every takeover")
}
