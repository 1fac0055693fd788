package bench

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// call is one request of a run, made by a worker.
type call func(ctx context.Context, w *world, wk *worker) error

// operation is one benchmarked operation: the store call and its raw etcd
// counterpart.
type operation struct {
	name  string
	store call
	raw   call
}

// operations returns every operation by name.
func operations() map[string]operation {
	return map[string]operation{
		"lease-renew": {"lease-renew",
			func(ctx context.Context, _ *world, wk *worker) error {
				res, err := wk.store.RenewOwnerLease(ctx, wk.token, leaseTTL)
				return expectKind(err, res.Kind, location.KindRenewed)
			},
			func(ctx context.Context, _ *world, wk *worker) error {
				_, err := wk.client.KeepAliveOnce(ctx, wk.rawLease)
				return err
			}},
		"lease-read": {"lease-read",
			func(ctx context.Context, _ *world, wk *worker) error {
				res, err := wk.store.ReadOwnerLease(ctx, wk.token.OwnerID)
				return expectKind(err, res.Kind, location.KindFound)
			},
			func(ctx context.Context, _ *world, wk *worker) error { return getOne(ctx, wk.client, wk.rawOwnerKey) }},
		"actor-resolve": {"actor-resolve",
			func(ctx context.Context, _ *world, wk *worker) error {
				a, err := wk.store.ResolveActor(ctx, wk.actor.Key())
				if err == nil && a == nil {
					err = fmt.Errorf("actor %s is missing", wk.actor.ActorID)
				}
				return err
			},
			func(ctx context.Context, _ *world, wk *worker) error { return getOne(ctx, wk.client, wk.rawActorKey) }},
		"actor-renew": {"actor-renew",
			func(ctx context.Context, _ *world, wk *worker) error {
				res, err := wk.store.UpdateActor(ctx, wk.actor, location.IntentRenew)
				return expectStatus(err, res.Status)
			},
			func(ctx context.Context, _ *world, wk *worker) error {
				return guardedPut(ctx, wk.client, wk.rawActorKey, wk.rawActorVal, &wk.rawActorRev)
			}},
		"authority-cas": {"authority-cas",
			func(ctx context.Context, _ *world, wk *worker) error {
				res, err := wk.store.CompareExchangeAuthority(ctx, wk.authKey, wk.version,
					location.AuthorityMutation{Kind: location.MutationPut, Payload: wk.payload, Transition: location.TransitionPreserve})
				if err := expectKind(err, res.Kind, location.KindStored); err != nil {
					return err
				}
				wk.version = res.Stored.StoreVersion
				return nil
			},
			func(ctx context.Context, _ *world, wk *worker) error {
				return guardedPut(ctx, wk.client, wk.rawAuthKey, wk.rawAuthVal, &wk.rawAuthRev)
			}},
		"mesh-list": {"mesh-list",
			func(ctx context.Context, w *world, wk *worker) error {
				page, err := wk.store.ListMeshNodes(ctx, benchMesh, location.PageRequest{PageSize: MaxMeshSize})
				if err == nil && len(page.Items) != w.opts.MeshSize {
					err = fmt.Errorf("listed %d descriptors, want %d", len(page.Items), w.opts.MeshSize)
				}
				return err
			},
			func(ctx context.Context, w *world, wk *worker) error {
				resp, err := wk.client.Get(ctx, w.rawPrefix+"mesh/", clientv3.WithPrefix())
				if err == nil && len(resp.Kvs) != w.opts.MeshSize {
					err = fmt.Errorf("read %d keys, want %d", len(resp.Kvs), w.opts.MeshSize)
				}
				return err
			}},
	}
}

// expectKind turns an unexpected result kind into an error.
func expectKind(err error, got, want location.ResultKind) error {
	if err == nil && got != want {
		err = fmt.Errorf("answered %s, want %s", got, want)
	}
	return err
}

// expectStatus turns a write status other than stored into an error.
func expectStatus(err error, got location.WriteStatus) error {
	if err == nil && got != location.Stored {
		err = fmt.Errorf("answered %s, want %s", got, location.Stored)
	}
	return err
}

// getOne reads one key that must exist.
func getOne(ctx context.Context, c *clientv3.Client, key string) error {
	resp, err := c.Get(ctx, key)
	if err == nil && len(resp.Kvs) == 0 {
		err = fmt.Errorf("key %q is missing", key)
	}
	return err
}

// guardedPut writes key only if it is still at *rev, and records the new
// revision.
func guardedPut(ctx context.Context, c *clientv3.Client, key string, value []byte, rev *int64) error {
	resp, err := c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", *rev)).Then(clientv3.OpPut(key, string(value))).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return fmt.Errorf("guarded put of %q lost its guard", key)
	}
	*rev = resp.Header.Revision
	return nil
}
