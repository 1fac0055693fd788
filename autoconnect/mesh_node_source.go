package autoconnect

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

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

	// memo holds the peer row built from each descriptor of the latest
	// listing, with what it was built from: a descriptor listed again
	// unchanged in those fields reuses its row (rows are not modified once
	// listed, PeerSource), so that a steady mesh costs a listing no row
	// building. listings counts the listings, to forget the descriptors the
	// latest one did not return.
	mu       sync.Mutex
	memo     map[meshNodeKey]memoPeer
	listings int64
}

// meshNodeKey names a descriptor: its mesh and routing id.
type meshNodeKey struct {
	mesh string
	rid  location.RoutingID
}

// memoPeer is a memoized peer row: the row, what PeerFromMeshNode read to
// build it, and the listing that last returned its descriptor.
type memoPeer struct {
	from    peerInputs
	row     location.PeerLocation
	listing int64
}

// peerInputs are the descriptor fields PeerFromMeshNode reads.
type peerInputs struct {
	endpoint, securityIdentity, ownerID string
	objectRole                          location.ObjectRole
	serving, hasServerChannel           bool
	revision, generation                int64
	updatedAt                           time.Time
}

// inputsOf returns the fields of d that PeerFromMeshNode reads (beside its
// mesh and routing id).
func inputsOf(d *location.MeshNodeDescriptor) peerInputs {
	return peerInputs{endpoint: d.Endpoint, securityIdentity: d.SecurityIdentity, ownerID: d.OwnerID,
		objectRole: d.ObjectRole, serving: d.State == location.StateServing, hasServerChannel: len(d.ChannelWeights) > 0,
		revision: d.DescriptorRevision, generation: d.LifecycleGeneration, updatedAt: d.UpdatedAt}
}

// peerRows returns the peer rows of one listing's descriptors, reusing the
// memoized row of every descriptor unchanged since the latest listing, and
// makes them the memo.
func (s *MeshNodeSource) peerRows(descriptors []location.MeshNodeDescriptor) []location.PeerLocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memo == nil {
		s.memo = make(map[meshNodeKey]memoPeer, len(descriptors))
	}
	s.listings++
	rows := make([]location.PeerLocation, len(descriptors))
	for i := range descriptors {
		d := &descriptors[i]
		key, in := meshNodeKey{d.MeshName, d.RID}, inputsOf(d)
		m, ok := s.memo[key]
		if !ok || m.from != in {
			m = memoPeer{from: in, row: PeerFromMeshNode(d)}
		}
		m.listing = s.listings
		s.memo[key] = m
		rows[i] = m.row
	}
	for key, m := range s.memo {
		if m.listing != s.listings {
			delete(s.memo, key)
		}
	}
	return rows
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
	all := s.peerRows(descriptors)
	rows := all[:0]
	owners := make([]string, 0, len(all))
	for _, row := range all {
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
		page, err := s.listPage(ctx, meshName, location.PageRequest{PageSize: s.pageSize, ContinuationToken: token})
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

// listPage lists one page of the mesh's descriptors, shared when the store
// can (SharedMeshNodeLister): the source only reads them (PeerFromMeshNode
// copies what it keeps).
func (s *MeshNodeSource) listPage(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	if shared, ok := s.store.(SharedMeshNodeLister); ok {
		return shared.ListMeshNodesShared(ctx, meshName, p)
	}
	return s.store.ListMeshNodes(ctx, meshName, p)
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
