// Package demo runs the mesh in miniature on an etcd store: simulated nodes
// that join as meshnode.Node (owner lease, descriptor, peer row,
// auto-connect loop with an executor that only records connections);
// actors created through the authority API, one of them relocated; then a
// node crash, after which the survivors drop the dead node, adopt its
// actors, collect its rows, and welcome it back when it restarts; finally
// every node leaves.
//
// Every stage runs within the stage timeout: it waits for the state it
// expects (never a fixed sleep), and retries a step that failed (an etcd
// leader election, an answer lost with the write applied or not) after
// reading what an earlier attempt did, so that a run survives its leader
// killed at any moment. It prints what happened and a table of nodes,
// leases and connections, and records a result; Run returns an error
// naming the first stage that did not reach its state.
package demo
