// Package inspect reads what a zlink store keeps under its root prefix on
// etcd and renders it for operators: mesh nodes, client servers, fanout
// publishers, peers, spots, actors, routes, owner leases (with the time
// their etcd leases have left) and authority records, as tables or JSON.
//
// The location tables and the owner leases are read with plain range reads
// at one revision and decoded from the documented values (docs/key-layout.md),
// so every row shows, whether or not its owner is alive. Two views come
// from the store's API instead: authority records (ListAuthorities, whose
// store version is the key's ModRevision) and the capacity usage of mesh
// nodes (ListMeshNodes, which reports the authority ledgers' usage).
//
// The package also reads the owner index, from which the garbage collector
// learns which owners hold rows without a lease (Holdings).
package inspect
