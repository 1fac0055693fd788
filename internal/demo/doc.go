// Package demo runs the mesh in miniature on an etcd store: simulated nodes
// that claim owner leases, publish mesh-node descriptors and peer rows and
// run the auto-connect loop with an executor that only records
// connections; actors created through the authority API, one of them
// relocated; then a node crash, after which the survivors drop the dead
// node, adopt its actors, collect its rows, and welcome it back when it
// restarts.
//
// Every stage waits for the state it expects (with a deadline, never a
// fixed sleep), prints what happened and a table of nodes, leases and
// connections, and records a result; Run returns an error naming the first
// stage that did not reach its state.
package demo
