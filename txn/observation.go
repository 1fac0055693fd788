package txn

import (
	"bytes"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// Observation is what the store knows of one key at one revision.
type Observation struct {
	Key string
	// Present reports whether the key existed.
	Present bool
	// Value, ModRevision, CreateRevision, Version and Lease are the key's
	// when Present (zero otherwise). Value must not be modified.
	Value          []byte
	ModRevision    int64
	CreateRevision int64
	Version        int64
	Lease          int64
	// Revision is the revision at which the key was seen in this state (the
	// header revision of the read, or of the write that produced it).
	Revision int64

	// derived is shared by every copy of the observation (see Derived).
	derived *derivedSlot
}

// derivedSlot holds a value derived from one observed Value.
type derivedSlot struct {
	v atomic.Pointer[derivedValue]
	// first holds the value the slot was made with (withDerived), in the
	// same allocation.
	first derivedValue
}

type derivedValue struct{ v any }

// Derived returns the value that SetDerived attached to this observation or
// to any copy of it (the engine's cache and every View share the copies of
// one read or write).
func (o Observation) Derived() (any, bool) {
	if o.derived == nil {
		return nil, false
	}
	d := o.derived.v.Load()
	if d == nil {
		return nil, false
	}
	return d.v, true
}

// SetDerived attaches v to the observation and all its copies, so that a
// value computed from Value alone (its decoded form) is computed once per
// observed value instead of once per use. v is shared: nobody may modify
// it. Observations the engine did not make (literals) have no room for it:
// SetDerived reports whether v was attached.
func (o Observation) SetDerived(v any) bool {
	if o.derived == nil {
		return false
	}
	o.derived.v.Store(&derivedValue{v: v})
	return true
}

// withDerivedSlot returns o with a fresh slot for a derived value.
func withDerivedSlot(o Observation) Observation {
	if o.Present {
		o.derived = &derivedSlot{}
	}
	return o
}

// withDerived returns o with a fresh slot holding v (nil: an empty slot),
// as withDerivedSlot followed by SetDerived.
func withDerived(o Observation, v any) Observation {
	o = withDerivedSlot(o)
	if o.derived != nil && v != nil {
		o.derived.first.v = v
		o.derived.v.Store(&o.derived.first)
	}
	return o
}

// observe builds an observation from a key-value read at revision rev; kv
// nil means the key was absent.
func observe(key string, kv *mvccpb.KeyValue, rev int64) Observation {
	if kv == nil {
		return Observation{Key: key, Revision: rev}
	}
	return withDerivedSlot(Observation{
		Key:            key,
		Present:        true,
		Value:          kv.Value,
		ModRevision:    kv.ModRevision,
		CreateRevision: kv.CreateRevision,
		Version:        kv.Version,
		Lease:          kv.Lease,
		Revision:       rev,
	})
}

// HasNonce reports whether the observed value carries the nonce.
func (o Observation) HasNonce(nonce string) bool {
	return o.Present && nonce != "" && bytes.Contains(o.Value, []byte(nonce))
}

// Observations is a snapshot of several keys read at one revision, as
// ReadKeys returns it.
type Observations struct {
	Revision int64
	Keys     map[string]Observation
}
