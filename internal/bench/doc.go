// Package bench is a load generator in the style of etcd's benchmark tool
// for the store's hot operations. Each operation runs twice with the same
// clients, connections, request count and rate: once through the store and
// once as the plainest etcd requests that do the same job ("raw etcd"), so
// the store's overhead reads directly from the two rows.
//
//	operation      store call                         raw etcd
//	lease-renew    RenewOwnerLease                    LeaseKeepAliveOnce
//	lease-read     ReadOwnerLease                     Get of one key
//	actor-resolve  ResolveActor                       Get of one key
//	actor-renew    UpdateActor (Renew)                Txn: ModRevision guard + Put
//	authority-cas  CompareExchangeAuthority (put)     Txn: ModRevision guard + Put
//	mesh-list      ListMeshNodes (one page)           range Get of as many keys
//
// Every client owns its own owner, descriptor, actor and authority record,
// so the clients never contend; the raw values have the sizes of the
// store's. Everything is written under a scratch prefix that the caller
// removes.
package bench
