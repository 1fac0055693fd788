package meshnode_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// errLost is the answer of a write that was applied but whose answer was
// lost (as an etcd leader change can do): its outcome is unknown to the
// caller.
var errLost = errors.New("test: the write was applied but its answer was lost")

// wrapStore is a memstore that logs the node's calls, can be made
// unreachable, and can lose the answers of applied writes.
type wrapStore struct {
	*memstore.Store
	// down makes every call fail with location.ErrUnavailable (nothing
	// applied).
	down atomic.Bool

	mu    sync.Mutex
	calls []string
	// loseDescriptor and losePeerClaim are how many UpdateMeshNode calls,
	// and UpdatePeer NewClaim calls, to apply and then answer errLost.
	loseDescriptor, losePeerClaim int
}

func newWrapStore(mem *memstore.Store) *wrapStore { return &wrapStore{Store: mem} }

// note logs a call and reports whether the store is down.
func (w *wrapStore) note(format string, args ...any) error {
	w.mu.Lock()
	w.calls = append(w.calls, fmt.Sprintf(format, args...))
	w.mu.Unlock()
	if w.down.Load() {
		return fmt.Errorf("test: store down: %w", location.ErrUnavailable)
	}
	return nil
}

// log returns the calls whose name starts with one of prefixes (all when
// none).
func (w *wrapStore) log(prefixes ...string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.calls {
		if len(prefixes) == 0 || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(c, p) }) {
			out = append(out, c)
		}
	}
	return out
}

// writes returns the logged calls that write.
func (w *wrapStore) writes() []string {
	return w.log("Claim", "Renew", "Release", "Update", "Remove")
}

func (w *wrapStore) ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	if err := w.note("ClaimOwnerLease %s", ownerID); err != nil {
		return location.OwnerLeaseClaimResult{}, err
	}
	return w.Store.ClaimOwnerLease(ctx, ownerID, ttl)
}

func (w *wrapStore) ReadOwnerLease(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	if err := w.note("ReadOwnerLease %s", ownerID); err != nil {
		return location.OwnerLeaseReadResult{}, err
	}
	return w.Store.ReadOwnerLease(ctx, ownerID)
}

func (w *wrapStore) RenewOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	if err := w.note("RenewOwnerLease %s/%d", t.OwnerID, t.LeaseGeneration); err != nil {
		return location.OwnerLeaseRenewResult{}, err
	}
	return w.Store.RenewOwnerLease(ctx, t, ttl)
}

func (w *wrapStore) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	if err := w.note("ReleaseOwnerLease %s/%d", t.OwnerID, t.LeaseGeneration); err != nil {
		return "", err
	}
	return w.Store.ReleaseOwnerLease(ctx, t)
}

func (w *wrapStore) UpdateMeshNode(ctx context.Context, d location.MeshNodeDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	if err := w.note("UpdateMeshNode %s %s", d.RID, intent); err != nil {
		return location.WriteResult{}, err
	}
	res, err := w.Store.UpdateMeshNode(ctx, d, intent)
	return w.answer(res, err, &w.loseDescriptor)
}

// answer notes the write's status on the last call and returns its result,
// or loses the answer of a write that succeeded while *lose (nil: none) is
// above zero, counting it down.
func (w *wrapStore) answer(res location.WriteResult, err error, lose *int) (location.WriteResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[len(w.calls)-1] += ":" + string(res.Status)
	if err == nil && lose != nil && *lose > 0 {
		*lose--
		w.calls[len(w.calls)-1] += "(answer lost)"
		return location.WriteResult{}, errLost
	}
	return res, err
}

func (w *wrapStore) RemoveMeshNode(ctx context.Context, k location.MeshNodeKey, owner location.OwnerToken) (location.WriteStatus, error) {
	if err := w.note("RemoveMeshNode %s", k.RID); err != nil {
		return "", err
	}
	return w.Store.RemoveMeshNode(ctx, k, owner)
}

func (w *wrapStore) ListMeshNodes(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	if err := w.note("ListMeshNodes"); err != nil {
		return location.Page[location.MeshNodeDescriptor]{}, err
	}
	return w.Store.ListMeshNodes(ctx, meshName, p)
}

// ListMeshNodesShared is ListMeshNodes (the auto-connect source lists
// shared descriptors when the store can: the wrapper must see it).
func (w *wrapStore) ListMeshNodesShared(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	return w.ListMeshNodes(ctx, meshName, p)
}

func (w *wrapStore) UpdatePeer(ctx context.Context, p location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	if err := w.note("UpdatePeer %s", intent); err != nil {
		return location.WriteResult{}, err
	}
	res, err := w.Store.UpdatePeer(ctx, p, intent)
	var lose *int
	if intent == location.IntentNewClaim {
		lose = &w.losePeerClaim
	}
	return w.answer(res, err, lose)
}

func (w *wrapStore) RemovePeer(ctx context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	if err := w.note("RemovePeer"); err != nil {
		return location.WriteResult{}, err
	}
	return w.Store.RemovePeer(ctx, k, owner)
}

func (w *wrapStore) ListPeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	if err := w.note("ListPeers"); err != nil {
		return nil, err
	}
	return w.Store.ListPeers(ctx, f)
}

func (w *wrapStore) RemoveAllByOwner(ctx context.Context, t location.OwnerToken) (int64, error) {
	if err := w.note("RemoveAllByOwner %s/%d", t.OwnerID, t.LeaseGeneration); err != nil {
		return 0, err
	}
	n, err := w.Store.RemoveAllByOwner(ctx, t)
	w.mu.Lock()
	w.calls[len(w.calls)-1] += fmt.Sprintf(":%d", n)
	w.mu.Unlock()
	return n, err
}
