package storecore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// listBackend records the list queries it is given (every other method is
// the embedded nil interface's: not called).
type listBackend struct {
	storecore.Backend
	got *storecore.ListQuery
}

func (b *listBackend) Name() string { return "list" }

func (b *listBackend) List(_ context.Context, q *storecore.ListQuery) (storecore.ListPage, error) {
	b.got = q
	return storecore.ListPage{}, nil
}

// A peer filter narrows the listed key range as far as its leading fields
// go — type, mesh, role, routing id — and the narrowed range holds every
// row the filter matches (rules.PeerKey).
func TestListPeersNarrows(t *testing.T) {
	typ, role, mesh, rid, endpoint := location.AutoConnectRouteMesh, location.PeerRoleRouter, "m", location.RoutingID("n1"), "tcp://a:1"
	typeName, err := typ.CanonicalName()
	require.NoError(t, err)
	roleName, err := role.CanonicalName()
	require.NoError(t, err)
	row := location.PeerLocation{AutoConnectType: typ, MeshName: mesh, Role: role, NodeRID: &rid, Endpoint: endpoint, OwnerID: "o"}
	tests := []struct {
		name   string
		filter location.PeerFilter
		narrow string
	}{
		{"none", location.PeerFilter{}, ""},
		{"type", location.PeerFilter{AutoConnectType: &typ}, keys.Segments(typeName)},
		{"type_mesh", location.PeerFilter{AutoConnectType: &typ, MeshName: &mesh}, keys.Segments(typeName, mesh)},
		{"type_mesh_role", location.PeerFilter{AutoConnectType: &typ, MeshName: &mesh, Role: &role},
			keys.Segments(typeName, mesh, roleName)},
		{"type_mesh_role_rid", location.PeerFilter{AutoConnectType: &typ, MeshName: &mesh, Role: &role, NodeRID: &rid},
			keys.Segments(typeName, mesh, roleName, rid.Hex())},
		{"rid_without_role", location.PeerFilter{AutoConnectType: &typ, MeshName: &mesh, NodeRID: &rid}, keys.Segments(typeName, mesh)},
		{"endpoint_does_not_narrow", location.PeerFilter{AutoConnectType: &typ, MeshName: &mesh, Role: &role, Endpoint: &endpoint},
			keys.Segments(typeName, mesh, roleName)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &listBackend{}
			s := storecore.New(b, storecore.Options{})
			_, err := s.ListPeers(t.Context(), tc.filter)
			require.NoError(t, err)
			require.Equal(t, tc.narrow, b.got.Narrow)
			require.True(t, b.got.Match(row), "the row matches")
			require.Truef(t, len(rules.PeerKey(row.Key())) >= len(tc.narrow) && rules.PeerKey(row.Key())[:len(tc.narrow)] == tc.narrow,
				"the matching row's key %q is in the narrowed range", rules.PeerKey(row.Key()))
		})
	}
}
