// Package leasemap keeps owner leases as etcd leases (decisions E-1, E-2,
// E-6; 03b E-01, 03b E-02, 03b E-04, 03b E-05, 03b E-19).
//
// An owner lease is one key, <root>owner/<seg(ownerId)>, attached to an etcd
// lease; it is the only lease-attached key of the store. The key exists
// exactly while the lease is live, and its CreateRevision is the owner's
// lease generation: unique, increasing across all claims, never reused. Row
// writes fence on an owner by comparing that CreateRevision inside their own
// transaction.
//
// etcd has no clock, so the times a lease reports come from the map's
// injectable clock: a lease of ttl is reported to expire at now + ttl, while
// etcd keeps it for ceil(ttl / 1 s) seconds (at least its minimum), which is
// never earlier. The owner-key value records the owner id, the requested TTL,
// the reported expiry and the etcd lease id (JSON, readable with etcdctl).
//
// Renewing with the same TTL (in whole seconds) keeps the etcd lease alive
// and rewrites the value in one transaction (both requests in parallel); a
// different TTL moves the key to a new etcd lease in one guarded
// transaction, which keeps the generation. Releasing deletes the key under a
// CreateRevision guard and revokes the lease.
//
// Keepalive belongs to the lease's holder: nothing here renews a lease
// unless asked, and Hold runs a renewal loop whose life is the Holder's, not
// any request's.
package leasemap
