// Package etcdstore is location.Store on etcd v3.
//
// The store methods are package storecore's (the same code as memstore's:
// context check, validation, decision); this package is the backend they
// run on. Every write runs the shared decision of package rules over a view
// of the keys it needs, read at one revision or taken from a cache of
// recently seen keys, and commits the decision's plan as one guarded
// transaction (package txn): its If re-asserts every observation (each
// row's ModRevision or absence, each owner key's CreateRevision), its Else
// returns the current values, so a lost race costs no extra read. A steady-state write (a renewal, a revision update, a
// preserving exchange) is one transaction.
//
// How the reference's numbers map onto etcd (00-decisions E-1..E-12):
//
//   - owner leases are etcd leases (package leasemap); the owner key is the
//     only lease-attached key, and its CreateRevision is the lease
//     generation;
//   - row generations and authority object/owner generations are the
//     revision of the read that decided the write, plus one, kept in the
//     value; an authority record's store version is its ModRevision;
//   - change stamps are the Version of one key per scope, put by every
//     transaction that changes the scope;
//   - times come from the store's clock (Options.Clock);
//   - lists read one revision; their tokens pin it;
//   - transactions respect the cluster's limits, and an operation that does
//     not fit is refused before anything is written (location.ErrTooLarge),
//     except RemoveAllByOwner and CollectGarbage, which work in guarded
//     batches;
//   - a write whose response is lost is resolved by looking for its random
//     nonce, never by guessing.
//
// The key layout and value encoding are documented in docs/key-layout.md,
// and pinned by golden files (testdata/format, TestGolden*): this package
// owns the stored format. Scan is the read-only scan that tools use
// (inspect, gc): one part of the layout at one revision, decoded with the
// store's own decoders; ScanRange is the one paging loop that every range
// read of the module goes through.
//
// The store keeps one etcd watch per key range its consumers need, shared
// by them (WatchChanges, the watch cache), and a watch cache that answers
// ListMeshNodes, ListPeers and ReadOwnerLiveness from memory with one
// linearizable request (docs/caching.md); WatchStats and CacheStats count
// what they do.
//
// Beyond location.Store the store offers WatchChanges, the mesh-node change
// stamp, ReadOwnerLiveness (location.OwnerLivenessReader), KeepOwnerLease
// (location.OwnerLeaseKeeper), CollectGarbage (rows of owners whose lease
// is gone, expired terminals), and ExpireOwnerLease for test harnesses.
package etcdstore
