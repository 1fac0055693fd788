package autoconnect

import "github.com/zlink-systems/zlink-etcd/location"

// ExplainDecision says in one short token why the planner dials row or not,
// checking in this order: type, mesh, role, empty endpoint, draining, self,
// initiator. The answers are "skip:type=<name>", "skip:mesh=<mesh>",
// "skip:role=<name>", "skip:empty-endpoint", "skip:draining", "skip:self",
// "skip:not-initiator localRid=<hex or <none>>" and "dial". Meant for log
// lines and test failure messages.
func ExplainDecision(local Local, row location.PeerLocation) string {
	switch {
	case row.AutoConnectType != local.AutoConnectType:
		return "skip:type=" + row.AutoConnectType.String()
	case row.MeshName != local.MeshName:
		return "skip:mesh=" + row.MeshName
	case !RoleAllowed(row.AutoConnectType, row.Role):
		return "skip:role=" + row.Role.String()
	case row.Endpoint == "":
		return "skip:empty-endpoint"
	case row.Draining:
		return "skip:draining"
	case IsSelf(local, row):
		return "skip:self"
	case !ShouldDial(local, row):
		rid := "<none>"
		if local.NodeRID != nil {
			rid = local.NodeRID.Hex()
		}
		return "skip:not-initiator localRid=" + rid
	default:
		return "dial"
	}
}
