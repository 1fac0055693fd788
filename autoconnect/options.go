package autoconnect

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Defaults of Options (the framework's location option defaults).
const (
	// DefaultOwnerLeaseTTL is the owner-lease TTL; after a store failure
	// removals are deferred for this long.
	DefaultOwnerLeaseTTL = 15 * time.Second
	// DefaultPollingInterval is the delay between two loop ticks and the age
	// up to which the lease tracker reuses a live owner's lease.
	DefaultPollingInterval = time.Second
	// DefaultStoreFailureGrace is how long after the start of a store outage
	// the reconciler still redials the last desired targets.
	DefaultStoreFailureGrace = 30 * time.Second
	// DefaultListPageSize is the page size of the mesh-node listing.
	DefaultListPageSize = 1000
)

// Options are the timing options that auto-connect shares with the
// framework's location options. A nil field takes its default, so an
// explicit zero is distinguishable from "unset".
type Options struct {
	// OwnerLeaseTTL is the length of the recovery window after a store
	// failure (during it no connection is removed). Default 15 s.
	OwnerLeaseTTL *time.Duration
	// PollingInterval is the loop's delay between ticks and the lease
	// tracker's cache age. Must not be negative. 0 makes the lease tracker
	// read an owner's lease on every check (no caching across ticks), as in
	// the framework; a Loop refuses 0 (its ticks would run back to back).
	// Default 1 s.
	PollingInterval *time.Duration
	// StoreFailureGrace is how long into a store outage the reconciler
	// redials the last desired targets; zero or negative disables those
	// retries. Default 30 s.
	StoreFailureGrace *time.Duration
	// ListPageSize is the page size of the mesh-node listing; 0 means the
	// default (1000).
	ListPageSize int
}

// timing is Options with the defaults applied.
type timing struct {
	ownerLeaseTTL     time.Duration
	pollingInterval   time.Duration
	storeFailureGrace time.Duration
	listPageSize      int
}

// resolve applies the defaults and checks the values.
func (o Options) resolve() (timing, error) {
	t := timing{
		ownerLeaseTTL:     DefaultOwnerLeaseTTL,
		pollingInterval:   DefaultPollingInterval,
		storeFailureGrace: DefaultStoreFailureGrace,
		listPageSize:      DefaultListPageSize,
	}
	if o.OwnerLeaseTTL != nil {
		t.ownerLeaseTTL = *o.OwnerLeaseTTL
	}
	if o.PollingInterval != nil {
		t.pollingInterval = *o.PollingInterval
	}
	if o.StoreFailureGrace != nil {
		t.storeFailureGrace = *o.StoreFailureGrace
	}
	if o.ListPageSize != 0 {
		t.listPageSize = o.ListPageSize
	}
	switch {
	case t.ownerLeaseTTL < 0:
		return timing{}, location.NewRangeError("autoconnect.owner_lease_ttl", "owner lease TTL %v must not be negative", t.ownerLeaseTTL)
	case t.pollingInterval < 0:
		return timing{}, location.NewRangeError("autoconnect.polling_interval", "polling interval %v must not be negative", t.pollingInterval)
	case t.listPageSize < 0:
		return timing{}, location.NewRangeError("autoconnect.list_page_size", "list page size %d must not be negative", t.listPageSize)
	}
	return t, nil
}
