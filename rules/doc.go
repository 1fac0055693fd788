// Package rules holds the decision procedures of the zlink location store:
// the reference's rules for every write, ported once and shared by memstore
// and etcdstore.
//
// A decision runs against a Tx. The Tx reads through a Source (the backend's
// consistent view of its state: maps under a lock for memstore, a snapshot at
// one etcd revision for etcdstore), records every write the decision makes in
// a Plan instead of applying it, and lets the decision read its own writes.
// The backend then applies the Plan: memstore to its maps, etcdstore as one
// guarded Txn. A decision has no other side effects, so a backend may run it
// again (for example after fetching a key the first run asked for).
//
// Inputs are validated by the caller (location.Validate*) before a decision
// runs; decisions return an error only for state-dependent invalid input and
// broken invariants (location.ErrInternal).
package rules
