package autoconnect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// publicationWarnInterval is the least time between two warnings that the
// local row is still not published.
const publicationWarnInterval = 30 * time.Second

// publishLocal publishes the local row once. It claims the row (NewClaim);
// when the claim conflicts with a row published before, it renews that row
// with the remembered generation; when there is no usable remembered
// generation (a claim whose answer was lost, a restart) it reads the row
// back and renews it with the stored generation if the row is this
// process's (adoptLocal). It reports whether the row is now published; with
// no local row, or when already published, it does no I/O. A store error is
// returned (the tick turns it into a store failure); a rejected publication
// is not an error, but is logged (noteRejected).
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
		if !errors.Is(err, location.ErrUnavailable) {
			// The claim may have been applied with its answer lost: it
			// would have assigned a generation nobody knows, so the
			// remembered one names the row no more.
			r.mu.Lock()
			r.localGeneration = 0
			r.mu.Unlock()
		}
		return false, fmt.Errorf("autoconnect: claim local peer row: %w", err)
	}
	if claimed.Status == location.Stored {
		r.notePublished(claimed.Generation)
		return true, nil
	}
	if claimed.Status != location.RejectedConflict {
		r.noteRejected(ctx, fmt.Sprintf("the store answered the claim with %s", claimed.Status), "")
		return false, nil
	}

	r.mu.Lock()
	generation := r.localGeneration
	r.mu.Unlock()
	if generation > 0 {
		renewed, err := r.renewLocal(ctx, row, generation)
		if err != nil || renewed {
			return renewed, err
		}
		// The remembered generation names the row no more: read it.
	}
	return r.adoptLocal(ctx, row)
}

// renewLocal renews row with generation and, when the store stored it,
// records the row as published under that generation.
func (r *Reconciler) renewLocal(ctx context.Context, row location.PeerLocation, generation int64) (bool, error) {
	row.Generation = generation
	renewed, err := r.publisher.UpdatePeer(ctx, row, location.IntentRenew)
	if err != nil {
		return false, fmt.Errorf("autoconnect: renew local peer row: %w", err)
	}
	if renewed.Status != location.Stored {
		return false, nil
	}
	r.notePublished(generation)
	return true, nil
}

// adoptLocal settles a claim that conflicted while no remembered generation
// named the row: it reads the stored row with the local row's identity, and when
// the row is this process's (the same owner id: peer rows carry no lease
// generation, so a row an earlier lease of this owner id wrote counts as
// this process's, as the store's own liveness and bulk-removal rules have
// it), renews it with the stored generation. A row of another owner is
// left alone: its owner's lease is live (else the claim would have won),
// and the claim is retried on the next tick, as the framework does.
func (r *Reconciler) adoptLocal(ctx context.Context, row location.PeerLocation) (bool, error) {
	stored, err := r.readLocalRow(ctx, row)
	if err != nil {
		return false, err
	}
	switch {
	case stored == nil:
		r.noteRejected(ctx, "the row that conflicted with the claim is gone; the claim is retried on the next tick", "")
		return false, nil
	case stored.OwnerID != row.OwnerID:
		r.noteRejected(ctx, "another live owner holds this node's peer row: two processes publish the same identity; "+
			"stop one of them or give this node its own routing id or endpoint", stored.OwnerID)
		return false, nil
	}
	renewed, err := r.renewLocal(ctx, row, stored.Generation)
	if err == nil && !renewed {
		r.noteRejected(ctx, "the row changed while it was being adopted; retried on the next tick", stored.OwnerID)
	}
	return renewed, err
}

// readLocalRow reads the stored row with row's peer identity (nil when
// there is none): ListPeers narrowed to the local row's type, mesh, role and
// routing id (its endpoint when it has no routing id).
func (r *Reconciler) readLocalRow(ctx context.Context, row location.PeerLocation) (*location.PeerLocation, error) {
	f := location.PeerFilter{AutoConnectType: &row.AutoConnectType, MeshName: &row.MeshName, Role: &row.Role, NodeRID: row.NodeRID}
	if row.NodeRID == nil {
		f.Endpoint = &row.Endpoint
	}
	rows, err := r.publisher.ListPeers(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("autoconnect: read local peer row back: %w", err)
	}
	for i := range rows {
		if rows[i].AutoConnectType == row.AutoConnectType && rows[i].MeshName == row.MeshName && sameIdentity(&rows[i], &row) {
			return &rows[i], nil
		}
	}
	return nil, nil
}

// sameIdentity reports whether the peer rows a and b name the same peer in a
// listing of one type and mesh: the same role and routing id, or, without a
// routing id, the same endpoint.
func sameIdentity(a, b *location.PeerLocation) bool {
	if a.Role != b.Role || !location.RoutingIDsEqual(a.NodeRID, b.NodeRID) {
		return false
	}
	return a.NodeRID != nil || a.Endpoint == b.Endpoint
}

// notePublished records the local row as published under generation and
// ends a streak of rejected publications.
func (r *Reconciler) notePublished(generation int64) {
	r.mu.Lock()
	r.localGeneration = generation
	r.localPublished = true
	rejected, warned := r.rejectedPublications, r.publicationWarned
	r.rejectedPublications, r.publicationWarned = 0, false
	r.mu.Unlock()
	if warned {
		r.log.Info("autoconnect: local peer row published", "mesh", r.local.MeshName,
			"generation", generation, "after_rejected_attempts", rejected)
	}
}

// noteRejected counts a tick whose publication was rejected and logs why at
// Debug, and at Warn from the second rejection in a row on (a claim can
// lose a race once), at most once per publicationWarnInterval while the
// streak lasts. holder is
// the owner id of the stored row when it was read.
func (r *Reconciler) noteRejected(ctx context.Context, reason, holder string) {
	now := r.clock.Now()
	r.mu.Lock()
	r.rejectedPublications++
	attempts := r.rejectedPublications
	warn := attempts >= 2 && (!r.publicationWarned || now-r.publicationWarnedAt >= publicationWarnInterval)
	if warn {
		r.publicationWarned, r.publicationWarnedAt = true, now
	}
	row := *r.localRow
	r.mu.Unlock()

	level := slog.LevelDebug
	if warn {
		level = slog.LevelWarn
	}
	attrs := []any{"mesh", row.MeshName, "role", row.Role, "endpoint", row.Endpoint, "owner", row.OwnerID,
		"reason", reason, "rejected_attempts", attempts}
	if row.NodeRID != nil {
		attrs = append(attrs, "rid", row.NodeRID.String())
	}
	if holder != "" {
		attrs = append(attrs, "holder", holder)
	}
	r.log.Log(ctx, level, "autoconnect: local peer row not published", attrs...)
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
