package txn

import (
	"bytes"

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
}

// observe builds an observation from a key-value read at revision rev; kv
// nil means the key was absent.
func observe(key string, kv *mvccpb.KeyValue, rev int64) Observation {
	if kv == nil {
		return Observation{Key: key, Revision: rev}
	}
	return Observation{
		Key:            key,
		Present:        true,
		Value:          kv.Value,
		ModRevision:    kv.ModRevision,
		CreateRevision: kv.CreateRevision,
		Version:        kv.Version,
		Lease:          kv.Lease,
		Revision:       rev,
	}
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
