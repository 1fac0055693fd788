package session_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/session"
)

// A session claims an owner lease, keeps it alive, fences the process's
// actions with it, and releases it on Close. Any location.OwnerLeaseStore
// works: etcdstore (renewing by keep-alives) or, here, memstore.
func ExampleNew() {
	ctx := context.Background()
	store := memstore.New(memstore.Options{})

	s, err := session.New(ctx, store, "node-7", session.Options{}) // framework defaults: TTL 15 s, …
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("token:", s.Token().OwnerID, s.Token().LeaseGeneration)
	if s.Valid() {
		fmt.Println("the lease may be trusted until TTL − fencing margin after the claim")
	}

	if err := s.Close(ctx); err != nil { // releases the lease
		fmt.Println(err)
	}
	fmt.Println("ended:", errors.Is(s.Err(), session.ErrClosed))
	lease, _ := store.ReadOwnerLease(ctx, "node-7")
	fmt.Println("lease after Close:", lease.Kind == location.KindMissing)
	// Output:
	// token: node-7 1
	// the lease may be trusted until TTL − fencing margin after the claim
	// ended: true
	// lease after Close: true
}

// A process that loses its lease learns it from Done and Err, and stops
// acting on the dead token (here the lease expires behind its back; on
// etcd a revocation ends the session at once).
func ExampleSession_Done() {
	ctx := context.Background()
	store := memstore.New(memstore.Options{})
	opts := session.Options{TTL: 3 * time.Second, RenewInterval: 100 * time.Millisecond,
		RenewTimeout: 500 * time.Millisecond, FencingMargin: time.Second}
	s, err := session.New(ctx, store, "node-7", opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = store.ExpireOwnerLease(ctx, "node-7")
	<-s.Done() // at the next renewal, within RenewInterval
	fmt.Println("lease lost:", errors.Is(s.Err(), session.ErrLeaseLost))
	fmt.Println("trusted now:", s.Valid())
	_ = s.Close(ctx) // nothing to release
	// Output:
	// lease lost: true
	// trusted now: false
}
