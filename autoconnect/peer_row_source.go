package autoconnect

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// LivenessChecker tells whether an owner holds a live lease; *LeaseTracker
// implements it.
type LivenessChecker interface {
	IsOwnerLive(ctx context.Context, ownerID string) (bool, error)
}

// OwnerRetainer is an optional LivenessChecker capability: after every
// complete listing, PeerRowSource and MeshNodeSource report the owners the
// listed rows referenced, so that the checker can forget the owners no
// listing needs any more. *LeaseTracker implements it.
type OwnerRetainer interface {
	// RetainOwners says that the latest listing of scope (a text naming
	// the table and the filter) referenced exactly ownerIDs.
	RetainOwners(scope string, ownerIDs []string)
}

// checkOwners reports which of owners hold a live lease, checking each
// distinct owner once: concurrently when liveness is a *LeaseTracker (which
// also records the answers, LeaseTracker.listOwners), one after the other
// otherwise. It also tells an OwnerRetainer that the listing of scope
// referenced exactly owners.
func checkOwners(ctx context.Context, liveness LivenessChecker, scope string, owners []string) (map[string]bool, error) {
	if lt, ok := liveness.(*LeaseTracker); ok {
		return lt.listOwners(ctx, scope, owners)
	}
	live := make(map[string]bool, len(owners))
	for _, o := range owners {
		if _, done := live[o]; done {
			continue
		}
		ok, err := liveness.IsOwnerLive(ctx, o)
		if err != nil {
			return nil, err
		}
		live[o] = ok
	}
	if r, ok := liveness.(OwnerRetainer); ok {
		r.RetainOwners(scope, owners)
	}
	return live, nil
}

// listingScope names one listing for OwnerRetainer: the table and every
// field of the filter ("*" when unset).
func listingScope(table location.Table, f location.PeerFilter) string {
	field := func(set bool, text string) string {
		if !set {
			return "*"
		}
		return strconv.Quote(text)
	}
	var typ, mesh, role, rid, endpoint string
	if f.AutoConnectType != nil {
		typ = strconv.Itoa(int(*f.AutoConnectType))
	}
	if f.MeshName != nil {
		mesh = *f.MeshName
	}
	if f.Role != nil {
		role = strconv.Itoa(int(*f.Role))
	}
	if f.NodeRID != nil {
		rid = f.NodeRID.Hex()
	}
	if f.Endpoint != nil {
		endpoint = *f.Endpoint
	}
	return strings.Join([]string{string(table), field(f.AutoConnectType != nil, typ), field(f.MeshName != nil, mesh),
		field(f.Role != nil, role), field(f.NodeRID != nil, rid), field(f.Endpoint != nil, endpoint)}, "|")
}

// PeerRowSource lists live peers from the peer table (the framework's
// generic peer resolver): ListPeers, then keep the rows with a known
// auto-connect type and role whose owner is live. Endpoints are normalised
// on read.
type PeerRowSource struct {
	store    PeerLister
	liveness LivenessChecker
}

// NewPeerRowSource returns a source over store, filtering by liveness.
func NewPeerRowSource(store PeerLister, liveness LivenessChecker) (*PeerRowSource, error) {
	if store == nil || liveness == nil {
		return nil, location.NewTypeError("autoconnect.peer_source", "peer row source needs a peer store and a liveness checker")
	}
	return &PeerRowSource{store: store, liveness: liveness}, nil
}

// ListLivePeers implements PeerSource. Each distinct owner of the listed
// rows is checked once.
func (s *PeerRowSource) ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	ctx = withTickReads(ctx)
	rows, err := s.store.ListPeers(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("autoconnect: list peers: %w", err)
	}
	known := make([]location.PeerLocation, 0, len(rows))
	owners := make([]string, 0, len(rows))
	for _, row := range rows {
		if row.AutoConnectType.Known() && row.Role.Known() {
			known = append(known, row)
			owners = append(owners, row.OwnerID)
		}
	}
	live, err := checkOwners(ctx, s.liveness, listingScope(location.TablePeers, f), owners)
	if err != nil {
		return nil, err
	}
	out := make([]location.PeerLocation, 0, len(known))
	for _, row := range known {
		if live[row.OwnerID] {
			row.Endpoint = keys.NormalizeEndpoint(row.Endpoint)
			out = append(out, row)
		}
	}
	return out, nil
}

// ChangeWatch implements WatchableSource: the peer table, when the store can
// watch.
func (s *PeerRowSource) ChangeWatch() (location.ChangeWatcher, []location.Table, bool) {
	return watchOf(s.store, location.TablePeers)
}
