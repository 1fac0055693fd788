package rules

import (
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// RemoveLocationRow plans the deletion of one row of a location table
// together with what the reference does alongside (03 §2, §4.2):
//
//   - mesh node: release its entry-spot claim if the claim matches the row
//     exactly; stamps (Peer, mesh) and the mesh-node stamp;
//   - peer: (Peer, mesh); spot: (Spot, mesh); actor: (Actor, mesh) (anomaly
//     A-08 fixed: RemoveAllByOwner bumps the mesh counter too);
//   - route: (Route) only; client server: (ClientServer, channel);
//   - fanout publisher: no stamp.
//
// Every (kind, mesh) bump also moves the kind's global counter. An absent row
// plans nothing. It does not check ownership or leases: the individual
// removes and RemoveAllByOwner do that first.
func RemoveLocationRow(tx *Tx, t location.Table, key string) error {
	rec, ok := tx.Get(t, key)
	if !ok {
		return nil
	}
	switch row := rec.Value.(type) {
	case location.MeshNodeDescriptor:
		if t != location.TableMeshNodes {
			break
		}
		if err := releaseEntrySpot(tx, &row); err != nil {
			return err
		}
		tx.Delete(t, key)
		bumpMeshNode(tx, row.MeshName)
		return nil
	case location.ClientServerDescriptor:
		if t != location.TableClientServers {
			break
		}
		tx.Delete(t, key)
		tx.Bump(location.LocationClientServer, &row.ChannelName)
		return nil
	case location.FanoutPublisherDescriptor:
		if t != location.TableFanoutPublishers {
			break
		}
		tx.Delete(t, key)
		return nil
	case location.PeerLocation:
		if t != location.TablePeers {
			break
		}
		tx.Delete(t, key)
		tx.Bump(location.LocationPeer, &row.MeshName)
		return nil
	case location.SpotLocation:
		if t != location.TableSpots {
			break
		}
		tx.Delete(t, key)
		tx.Bump(location.LocationSpot, &row.MeshName)
		return nil
	case location.ActorLocation:
		if t != location.TableActors {
			break
		}
		tx.Delete(t, key)
		tx.Bump(location.LocationActor, &row.MeshName)
		return nil
	case location.RouteLocation:
		if t != location.TableRoutes {
			break
		}
		tx.Delete(t, key)
		tx.Bump(location.LocationRoute, nil)
		return nil
	}
	return fmt.Errorf("%w: table %s key %q holds %T, which is not a row of that location table", location.ErrInternal, t, key, rec.Value)
}

// RowOwnerID returns the owner id of a location-table row value (any of the
// seven row types); ok is false for any other value.
func RowOwnerID(v any) (ownerID string, ok bool) {
	switch row := v.(type) {
	case location.MeshNodeDescriptor:
		return row.OwnerID, true
	case location.ClientServerDescriptor:
		return row.OwnerID, true
	case location.FanoutPublisherDescriptor:
		return row.OwnerID, true
	case location.PeerLocation:
		return row.OwnerID, true
	case location.SpotLocation:
		return row.OwnerID, true
	case location.ActorLocation:
		return row.OwnerID, true
	case location.RouteLocation:
		return row.OwnerID, true
	default:
		return "", false
	}
}
