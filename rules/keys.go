package rules

import (
	"fmt"
	"strconv"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Canonical table keys. Every store uses these, so rows are identified and
// ordered (byte order of the key) the same way everywhere. Inputs are
// assumed validated.

// MeshNodeKey is the key of a mesh-node row.
func MeshNodeKey(k location.MeshNodeKey) string { return keys.Segments(k.MeshName, string(k.RID)) }

// ClientServerKey is the key of a client-server row.
func ClientServerKey(k location.ClientServerKey) string {
	return keys.Segments(k.ChannelName, string(k.ServerRID))
}

// FanoutPublisherKey is the key of a fanout publisher row.
func FanoutPublisherKey(k location.FanoutPublisherKey) string {
	return keys.Segments(k.ChannelName, string(k.PublisherRID))
}

// PeerKey is the key of a peer row: canonical type name, mesh, canonical role
// name, identity (the rid's hex when present, else the endpoint, else "").
func PeerKey(k location.PeerKey) string {
	identity := ""
	switch {
	case k.NodeRID != nil:
		identity = k.NodeRID.Hex()
	case k.Endpoint != nil:
		identity = *k.Endpoint
	}
	return keys.Segments(canonical(k.AutoConnectType.CanonicalName()), k.MeshName, canonical(k.Role.CanonicalName()), identity)
}

// canonical keeps validated names; an unvalidated unknown value still gets a
// distinct key instead of a panic.
func canonical(name string, err error) string {
	if err != nil {
		return fmt.Sprintf("?%v", err)
	}
	return name
}

// SpotKey is the key of a spot row.
func SpotKey(k location.SpotKey) string { return keys.Segments(k.MeshName, k.SpotID) }

// ActorKey is the key of an actor row.
func ActorKey(k location.ActorKey) string { return keys.Segments(k.MeshName, k.ActorID) }

// RouteKey is the key of a route row.
func RouteKey(k location.RouteKey) string {
	return keys.Segments(strconv.Itoa(int(k.RouteKind)), k.RouteKey)
}

// TransferSlotKey is the key of an actor's transfer slot (TableTransferActive).
func TransferSlotKey(meshName, actorID string) string { return keys.Segments(meshName, actorID) }

// TransferRecordKey is the key of one transfer record (TableTransferRecords).
func TransferRecordKey(ref location.ActorTransferRef) string {
	return keys.Segments(ref.MeshName, ref.ActorID, ref.TransferID)
}

// AggregateKey is the key of an aggregate record.
func AggregateKey(f location.AggregateFence) string {
	return keys.Segments(f.AggregateID, strconv.FormatInt(f.AggregateGeneration, 10))
}

// OperationKey is the key of a creation operation's terminal.
func OperationKey(op location.OperationIdentity) string {
	return keys.Segments(string(op.SourceNodeRID), strconv.FormatInt(op.SourceNodeGeneration, 10),
		fmt.Sprintf("%016x", op.OperationID.High), fmt.Sprintf("%016x", op.OperationID.Low))
}
