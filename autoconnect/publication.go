package autoconnect

import (
	"context"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// publishLocal publishes the local row once: a NewClaim, or, when that
// conflicts with a row published before (our own, still under our lease), a
// Renew with the remembered generation. It reports whether the row is now
// published; with no local row, or when already published, it does no I/O.
// A store error is returned (the tick turns it into a store failure);
// a rejected claim or renewal is not an error.
func (r *Reconciler) publishLocal(ctx context.Context) (bool, error) {
	r.mu.Lock()
	if r.localRow == nil || r.localPublished {
		published := r.localPublished
		r.mu.Unlock()
		return published, nil
	}
	row := clonePeer(*r.localRow)
	r.mu.Unlock()

	claimed, err := r.publisher.UpdatePeer(ctx, row, location.IntentNewClaim)
	if err != nil {
		return false, fmt.Errorf("autoconnect: claim local peer row: %w", err)
	}
	r.mu.Lock()
	if claimed.Status == location.Stored {
		r.localGeneration = claimed.Generation
		r.localPublished = true
		r.mu.Unlock()
		return true, nil
	}
	generation := r.localGeneration
	r.mu.Unlock()
	if claimed.Status != location.RejectedConflict || generation <= 0 {
		r.log.Debug("autoconnect: local peer row not published", "status", claimed.Status, "mesh", row.MeshName)
		return false, nil
	}

	row.Generation = generation
	renewed, err := r.publisher.UpdatePeer(ctx, row, location.IntentRenew)
	if err != nil {
		return false, fmt.Errorf("autoconnect: renew local peer row: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.localPublished = renewed.Status == location.Stored
	return r.localPublished, nil
}

// UnpublishLocal removes the published local row (RemovePeer with the row
// generation in the owner token; the status is ignored). It does nothing
// when the row is not believed published, for example after a store
// failure: the owner's bulk removal or its lease expiry cleans up then. The
// row stays marked published if a concurrent publication changed its
// generation meanwhile. A store error is returned.
func (r *Reconciler) UnpublishLocal(ctx context.Context) error {
	r.mu.Lock()
	if !r.localPublished || r.localRow == nil {
		r.mu.Unlock()
		return nil
	}
	endpoint := r.localRow.Endpoint
	key := location.PeerKey{
		AutoConnectType: r.localRow.AutoConnectType,
		MeshName:        r.localRow.MeshName,
		Role:            r.localRow.Role,
		NodeRID:         cloneRID(r.localRow.NodeRID),
		Endpoint:        &endpoint,
	}
	owner := location.OwnerToken{OwnerID: r.localRow.OwnerID, LeaseGeneration: r.localGeneration}
	r.mu.Unlock()

	if _, err := r.publisher.RemovePeer(ctx, key, owner); err != nil {
		return fmt.Errorf("autoconnect: remove local peer row: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.localGeneration == owner.LeaseGeneration {
		r.localPublished = false
	}
	return nil
}
