package autoconnect

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// MeshNodePeerWeight is the weight of every peer row made from a mesh-node
// descriptor (the planner ignores weights).
const MeshNodePeerWeight = 100

// maxListingRestarts bounds how often one listing starts again from the first
// page after its continuation token expired.
const maxListingRestarts = 3

// MeshNodeSource lists live RouteMesh peers from the mesh-node descriptors
// (the framework's production RouteMesh wiring), reading every page of the
// listing. Each live descriptor becomes a Router peer row; see
// PeerFromMeshNode.
type MeshNodeSource struct {
	store    MeshNodeLister
	liveness LivenessChecker
	pageSize int
}

// NewMeshNodeSource returns a source over store, filtering by liveness and
// listing opts.ListPageSize descriptors per page.
func NewMeshNodeSource(store MeshNodeLister, liveness LivenessChecker, opts Options) (*MeshNodeSource, error) {
	if store == nil || liveness == nil {
		return nil, location.NewTypeError("autoconnect.mesh_node_source", "mesh-node source needs a mesh-node store and a liveness checker")
	}
	t, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	return &MeshNodeSource{store: store, liveness: liveness, pageSize: t.listPageSize}, nil
}

// ListLivePeers implements PeerSource. A filter without a mesh name, or for
// another type than RouteMesh, or another role than Router, matches nothing.
// Each distinct owner of the matching descriptors is checked once.
func (s *MeshNodeSource) ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	if f.MeshName == nil ||
		(f.AutoConnectType != nil && *f.AutoConnectType != location.AutoConnectRouteMesh) ||
		(f.Role != nil && *f.Role != location.PeerRoleRouter) {
		return []location.PeerLocation{}, nil
	}
	ctx = withTickReads(ctx)
	descriptors, err := s.listAll(ctx, *f.MeshName)
	if err != nil {
		return nil, err
	}
	rows := make([]location.PeerLocation, 0, len(descriptors))
	owners := make([]string, 0, len(descriptors))
	for i := range descriptors {
		row := PeerFromMeshNode(&descriptors[i])
		if (f.NodeRID != nil && !location.RoutingIDsEqual(row.NodeRID, f.NodeRID)) ||
			(f.Endpoint != nil && row.Endpoint != *f.Endpoint) {
			continue
		}
		rows = append(rows, row)
		owners = append(owners, row.OwnerID)
	}
	live, err := checkOwners(ctx, s.liveness, listingScope(location.TableMeshNodes, f), owners)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, row := range rows {
		if live[row.OwnerID] {
			out = append(out, row)
		}
	}
	return out, nil
}

// listAll reads every page of the mesh's descriptors. When the store reports
// that a continuation token expired, the listing starts again (a bounded
// number of times).
func (s *MeshNodeSource) listAll(ctx context.Context, meshName string) ([]location.MeshNodeDescriptor, error) {
	for restarts := 0; ; restarts++ {
		all, err := s.listPages(ctx, meshName)
		if errors.Is(err, location.ErrScanExpired) && restarts < maxListingRestarts {
			continue
		}
		return all, err
	}
}

// listPages reads the pages of one listing.
func (s *MeshNodeSource) listPages(ctx context.Context, meshName string) ([]location.MeshNodeDescriptor, error) {
	var all []location.MeshNodeDescriptor
	token := ""
	for {
		page, err := s.store.ListMeshNodes(ctx, meshName, location.PageRequest{PageSize: s.pageSize, ContinuationToken: token})
		if err != nil {
			return nil, fmt.Errorf("autoconnect: list mesh nodes of %q: %w", meshName, err)
		}
		all = append(all, page.Items...)
		if page.ContinuationToken == "" {
			return all, nil
		}
		if page.ContinuationToken == token {
			return nil, fmt.Errorf("autoconnect: list mesh nodes of %q: continuation token %q did not advance", meshName, token)
		}
		token = page.ContinuationToken
	}
}

// ChangeWatch implements WatchableSource: the mesh-node table, when the
// store can watch.
func (s *MeshNodeSource) ChangeWatch() (location.ChangeWatcher, []location.Table, bool) {
	return watchOf(s.store, location.TableMeshNodes)
}

// PeerFromMeshNode maps a mesh-node descriptor to the peer row the planner
// sees: a RouteMesh Router with the descriptor's rid, normalised endpoint,
// owner and lifecycle generation (as the row generation); draining unless
// the node is Serving; weight 100; value = descriptor revision; metadata
// objectRole, hasRouteMeshServerChannel ("true" iff the descriptor has a
// channel weight), descriptorRevision (decimal) and securityIdentity.
func PeerFromMeshNode(d *location.MeshNodeDescriptor) location.PeerLocation {
	rid := d.RID
	return location.PeerLocation{
		AutoConnectType: location.AutoConnectRouteMesh,
		MeshName:        d.MeshName,
		NodeRID:         &rid,
		Role:            location.PeerRoleRouter,
		Endpoint:        keys.NormalizeEndpoint(d.Endpoint),
		Weight:          MeshNodePeerWeight,
		Draining:        d.State != location.StateServing,
		Value:           d.DescriptorRevision,
		Metadata: map[string]string{
			MetadataObjectRole:                string(d.ObjectRole),
			MetadataHasRouteMeshServerChannel: strconv.FormatBool(len(d.ChannelWeights) > 0),
			MetadataDescriptorRevision:        strconv.FormatInt(d.DescriptorRevision, 10),
			MetadataSecurityIdentity:          d.SecurityIdentity,
		},
		OwnerID:    d.OwnerID,
		Generation: d.LifecycleGeneration,
		UpdatedAt:  d.UpdatedAt,
	}
}
