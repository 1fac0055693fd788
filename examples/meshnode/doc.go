// Command meshnode is an example mesh-node service: one zlink mesh node on
// an etcd store, packaged as the image zlink-etcd/meshnode and run by the
// Kubernetes Deployment in deploy/kubernetes/base/meshnode.yaml.
//
// It connects to etcd (retrying while the members do not answer yet),
// joins the mesh as a meshnode.Node under its node id (routing id and
// owner id: the pod name), publishes the descriptor and peer row with the
// endpoint tcp://<advertised address>, and runs auto-connect with its own
// executor. When its lease can no longer be trusted it stops acting (the
// node disconnects every peer, and the listener drops and refuses every
// inbound connection) and rejoins under a new lease. On SIGTERM it turns
// unready, stops writing, and leaves the mesh (loop stopped, every row of
// its owner id removed, lease released) within --shutdown-grace (25 s by
// default, under the Deployment's terminationGracePeriodSeconds of 30 s),
// then exits 0. A fatal error exits 1, a configuration it refuses 2, each
// with one line on stderr: "meshnode: <why>".
//
// # The executor
//
// The executor logs every connect and disconnect. With --dial-peers (the
// default) it also opens a real TCP connection to each peer it connects
// to (the lower routing id of each pair dials, as auto-connect decides)
// and serves its own mesh port (--listen, 7100): the dialer sends a hello
// naming both nodes and their lifecycle generations, the listener welcomes
// it only when it is that node at that generation and trusts its lease,
// and both sides then send a heartbeat every second and drop a connection
// silent for three. So the connections really cross the container network
// and its NetworkPolicies, a restarted pod that got another pod's old IP
// address is not mistaken for it, and a fenced node is cut off from both
// sides. The transport is an autoconnect.DisconnectProber: a connection
// that died is dialed again on the next tick. --dial-peers=false only
// logs (no listener).
//
// # Application work
//
// With --actor-interval the node creates one actor on itself per interval
// through the authority API (reserve, complete the creation) and writes
// its actor row, under its current lease and only while that lease is
// trusted (each step is bounded by the lease's trust,
// session.Session.WhileTrusted: it is cancelled when the session ends or
// its trust deadline passes). On SIGTERM it stops before its next step
// but lets the step in flight finish: a write cancelled on its way may
// still be applied after the leave removed the node's rows, and a row it
// creates would then be left. Every write the
// store acknowledged is logged ("actor created", "actor row stored"): the
// acknowledged-write log the cluster test (make cluster-test) checks
// against zlinketcd inspect.
//
// # Endpoints (--metrics-addr, :9090)
//
//   - /metrics: Prometheus, on the process's own registry: the store's
//     operations and etcd requests (observe/etcdobserve), the node's
//     sessions and auto-connect loop (observe.NodeMetrics), Go and process
//     metrics, and the example's own: zlink_example_mesh_links{direction},
//     zlink_example_node_incarnation, zlink_example_actors_created_total,
//     zlink_example_actor_rows_stored_total, zlink_example_actor_failures_total{step}.
//   - /livez: the process serves HTTP (nothing a restart would fix is
//     checked; see docs/observability.md).
//   - /readyz: etcd answers with a leader, the lease is trusted,
//     auto-connect reads the store, and no shutdown is under way.
//   - /debug/state: the node as it sees itself, as JSON: phase, trust,
//     incarnation and session, the peers it has a link with, and the
//     incarnations it fenced with their own timestamps (last confirmed
//     renewal, trust deadline, when the lease was lost, when inbound
//     connections were dropped, when the node reported itself fenced).
//
// # Configuration
//
// Flags, each also settable by an environment variable (a flag given
// wins): see meshnode --help, package config, and docs/deployment.md. The
// node id defaults to $POD_NAME, the advertised address to $POD_IP with
// the port of --listen. --check-config checks everything without
// connecting to etcd (the TLS files are read, the node's options are
// checked by joining an in-memory store) and prints the configuration in
// effect as JSON.
package main
