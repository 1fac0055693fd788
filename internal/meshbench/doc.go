// Package meshbench is the mesh scale harness: it runs N simulated mesh
// nodes, each the real node stack (meshnode.Node: owner-lease session,
// descriptor publication, auto-connect loop) with an executor that only
// records what the loop decides, each over its own etcd client and store as
// separate pods would be, against one etcd cluster, and measures what the
// mesh costs etcd and the nodes:
//
//   - steady state (every node joined, nothing changing): Raft proposals,
//     watch events and bytes delivered, read requests and rows read, lease
//     keep-alives, per second; CPU and memory per node;
//   - one node joining, then leaving: the same counts above the steady
//     rate, and the time until every live node's executor agrees with the
//     live set (p50/p99 across the nodes);
//   - a rolling restart of a tenth of the nodes, one after the other: the
//     time to converge after the last restart, and etcd's peak load over
//     one-second windows.
//
// etcd's figures come from its own Prometheus endpoint, scraped before and
// after each phase (and every second during the rolling restart); the
// clients' from a counting KV (etcdstore.Options.WrapKV) and a gRPC stats
// handler on every node's client.
//
// A node agrees with the live set when the candidates its last
// reconciliation handed the executor (autoconnect.PeerExpecter) are
// exactly the other live nodes at their current lifecycle generation, and
// the targets it is connected to are exactly those of them it dials (the
// lower routing id dials).
//
// Run does not start etcd: the caller gives the endpoints (the command
// `zlinketcd bench mesh`, the tests and the benchmark start an embedded
// member or real etcd processes, see internal/etcdproc). The results
// (Result, JSON) are rendered into docs/scale.md by Render.
package meshbench
