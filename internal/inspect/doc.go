// Package inspect reads what a zlink store keeps under its root prefix on
// etcd and renders it for operators: mesh nodes, client servers, fanout
// publishers, peers, spots, actors, routes, owner leases (with the time
// their etcd leases have left) and authority records, as tables or JSON.
//
// The location tables, the owner leases and the owner index are read with
// etcdstore.Scan at one revision and decoded with the store's own decoders
// (the table registry's value types, leasemap's owner-lease record): this
// package has no decoder of its own. Every row shows, whether or not its
// owner is alive. A lease kept alive by keep-alives shows the expiry its
// etcd lease gives, as ReadOwnerLease reports it, not the stale one its key
// records. Two views come
// from the store's API instead: authority records (ListAuthorities, whose
// store version is the key's ModRevision) and the capacity usage of mesh
// nodes (ListMeshNodes, which reports the authority ledgers' usage).
//
// The package also reads the owner index, from which the garbage collector
// learns which owners hold rows without a lease (Holdings).
package inspect
