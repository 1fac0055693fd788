package storecore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Backend is the port a store implements: where its state lives and how it
// is read and changed. Store does everything around it once, for every
// backend. Errors a Backend returns are not prefixed with the store or the
// operation (Store does that); the ones that classify wrap a location
// sentinel.
type Backend interface {
	// Name prefixes the store's errors, for example "memstore".
	Name() string
	// Now reads the store clock (UTC, millisecond precision). Store reads
	// it only for validation that depends on time; decisions get their time
	// from the backend's Source.
	Now() time.Time
	// Decide runs c.Run over a rules.Tx on a consistent view of the state
	// and applies the plan it records, atomically: all of it or, when Run
	// or the application fails, none of it. Run may run more than once
	// (each run starts from a fresh Tx). Decide returns Run's error as it
	// is.
	Decide(ctx context.Context, c *Call) error
	// List returns one page of a location list (ListQuery).
	List(ctx context.Context, q *ListQuery) (ListPage, error)
	// ScanAuthorities returns one page of the authority records whose key
	// starts with prefix (location.AuthorityStore.ListAuthorities, its
	// input validated).
	ScanAuthorities(ctx context.Context, prefix, cursor string, limit int) (location.AuthorityScanResult, error)
	// RemoveOwned removes what the token's owner holds
	// (location.OwnerCleanup.RemoveAllByOwner); on an error it returns the
	// count removed so far with it.
	RemoveOwned(ctx context.Context, t location.OwnerToken) (int64, error)
	// ChangeStamp reads one change-stamp counter (0 before its first move).
	ChangeStamp(ctx context.Context, c rules.StampCounter) (int64, error)
	// MeshNodeChangeStamp reads a mesh's mesh-node change stamp.
	MeshNodeChangeStamp(ctx context.Context, meshName string) (int64, error)
	// Watch subscribes to changes (location.ChangeWatcher.WatchChanges).
	Watch(ctx context.Context, tables []location.Table) (<-chan struct{}, error)
	// Leases returns the backend's owner leases.
	Leases() Leases
	// ReadLiveness answers location.OwnerLivenessReader.ReadOwnerLiveness
	// for ownerIDs (validated, at least one).
	ReadLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error)
}

// Leases are a backend's owner leases (location.OwnerLeaseStore, and the
// conformance harness's expiry hook). Inputs are validated before these
// are called. On etcd they are package leasemap's Map.
type Leases interface {
	Claim(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error)
	Read(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error)
	Renew(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error)
	Release(ctx context.Context, t location.OwnerToken) (location.ResultKind, error)
	// Expire ends ownerID's current lease at once, as if its TTL had
	// elapsed; an owner without a lease is left alone.
	Expire(ctx context.Context, ownerID string) error
}

// Call is one decision for Backend.Decide: the operation, its decision
// (Run, run as often as the backend needs) and the read set it names
// (Reads).
type Call struct {
	// Op is the operation.
	Op Op
	// Result points at the result of the last run of Run (a *R), for
	// backends that complete results after applying them (etcd replaces the
	// store versions a decision issued by its commit's revision); nil when
	// there is none.
	Result any
	// runner runs the decision and names its read set.
	runner decider
}

// decider is what a Call runs: one run of its decision, and the read set
// it names (ok false when it names none).
type decider interface {
	run(tx *rules.Tx) error
	readSet(p Peek) (rs ReadSet, ok bool)
}

// NewCall returns the call of a decision that names no read set and keeps
// its result itself: run is the decision.
func NewCall(op Op, run func(tx *rules.Tx) error) *Call {
	return &Call{Op: op, runner: runFunc(run)}
}

// Run runs the decision once over tx: the caller's Run, or the rules
// decision of a Store's operation. It may run more than once (each run
// starts from a fresh Tx).
func (c *Call) Run(tx *rules.Tx) error { return c.runner.run(tx) }

// Reads names what the decision is expected to read, so that a backend
// that reads remotely can fetch it before the first run; ok is false when
// the decision names nothing. It is a hint: what the decision reads beyond
// it is read on demand.
func (c *Call) Reads(p Peek) (rs ReadSet, ok bool) { return c.runner.readSet(p) }

// runFunc is the decider of NewCall.
type runFunc func(tx *rules.Tx) error

func (f runFunc) run(tx *rules.Tx) error { return f(tx) }

func (runFunc) readSet(Peek) (ReadSet, bool) { return ReadSet{}, false }

// Peek answers from what a backend holds at hand (etcd: its cache of
// recently seen keys) without I/O, for read-set hints that depend on a row
// the decision will read (the authority record's node, for example); ok is
// false when it holds nothing for the row. The record is shared: do not
// modify it.
type Peek func(t rules.Table, key string) (rules.Record, bool)

// ReadSet names what a decision is expected to read.
type ReadSet struct {
	// Refs are read together before the first run (unless every one of
	// them is at hand).
	Refs []Ref
	// Absent are rows expected not to exist, such as rows named after a
	// fresh random id: a backend may take their absence for granted (and
	// verify it when it applies the plan) instead of reading them.
	Absent []Ref
}

// Ref names one thing a decision reads: a row of a table, or an owner's
// lease (Table "").
type Ref struct {
	Table rules.Table
	// Key is the row's table key, or the owner id of an owner lease.
	Key string
}

// Row names the row of table t under key.
func Row(t rules.Table, key string) Ref { return Ref{Table: t, Key: key} }

// Lease names the owner lease of ownerID.
func Lease(ownerID string) Ref { return Ref{Key: ownerID} }

// IsLease reports whether r names an owner lease.
func (r Ref) IsLease() bool { return r.Table == "" }

// ListQuery is one page of a location list, its filter in two forms: as
// functions over rows (every backend applies them), and as the key prefix
// it fixes (backends that read key ranges read only that range).
type ListQuery struct {
	Op Op
	// Table is the listed table; rows are its values (rules.Record.Value).
	Table rules.Table
	// Narrow is the prefix of the table keys the filter fixes (canonical
	// key segments, rules.SpotKey and friends), "" when it fixes none.
	Narrow string
	// Filter identifies the filter, so that a continuation token can be
	// bound to one list (any JSON-encodable value).
	Filter any
	// Match keeps the rows the filter accepts; nil keeps every row.
	Match func(row any) bool
	// LiveOwner, when set, keeps only the rows whose owner id (as it
	// returns it) holds a live lease, of any generation, at the rows' point
	// in time.
	LiveOwner func(row any) string
	// Project, when set, returns a row as it is listed, computed over the
	// store at the rows' point in time (mesh nodes: capacity from the
	// ledgers); otherwise rows are listed as stored (copies). It returns a
	// row of its own and must not modify the one it is given (etcdstore's
	// watch cache passes its shared copy).
	Project func(tx *rules.Tx, row any) any
	// ProjectReads names what Project reads for a row (a hint, as
	// Call.Reads).
	ProjectReads func(row any) []Ref
	// Page is the caller's page request; a page size of 0 or less lists
	// every row.
	Page location.PageRequest
	// Shared says that the caller neither modifies the rows nor what they
	// reference: a backend may list rows that share their maps, slices and
	// pointers with what it keeps (etcdstore's watch cache) instead of
	// deep copies.
	Shared bool
}

// ListPage is one page of a list: rows in byte order of their table key,
// each the caller's own, and the token of the next page ("" at the end).
type ListPage struct {
	Rows  []any
	Token string
}

// Options configure a Store.
type Options struct {
	// Observer sees every operation; nil observes nothing.
	Observer Observer
	// PurgeExpiredTerminals makes ReadCreationTerminal delete the expired
	// terminal it reads, as the reference's in-memory store does; without
	// it expired terminals stay, invisible, until a garbage collector
	// removes them (decision E-11).
	PurgeExpiredTerminals bool
}

// Store is location.Store (with location.ChangeWatcher,
// location.MeshNodeChangeStamper, location.OwnerLivenessReader and the
// conformance harness's ExpireOwnerLease hook) over a Backend. Every
// method is written once, here, in the same steps for every backend:
//
//  1. the Observer's Start;
//  2. the context: a done context returns its error, wrapped, before
//     anything (anomaly A-29 fixed);
//  3. validation of the input (location.Validate*): an error wrapping
//     location.ErrInvalidArgument, before anything is read or written;
//  4. the backend: a decision of package rules through Backend.Decide, or
//     one of the backend's reads (lists, change stamps, owner leases);
//  5. errors are prefixed "<backend name>: <operation>: ", once; the
//     Observer's End.
//
// Safe for concurrent use when the backend is.
type Store struct {
	b    Backend
	opts Options
}

// New returns the Store of b.
func New(b Backend, opts Options) Store { return Store{b: b, opts: opts} }

// Do runs fn as one operation of s: Observer, context check, validate (nil
// for none), then fn, its error prefixed. Store's methods are built on it;
// a backend's own operations (etcdstore's CollectGarbage) use it too, so
// that they are observed alike.
func Do[R any](ctx context.Context, s *Store, op Op, validate func() error, fn func(ctx context.Context) (R, error)) (res R, err error) {
	if obs := s.opts.Observer; obs != nil {
		start := time.Now()
		ctx = obs.Start(ctx, op)
		defer func() { obs.End(ctx, op, Outcome{Result: res, Err: err, Elapsed: time.Since(start)}) }()
	}
	if err := ctx.Err(); err != nil {
		return res, s.wrap(op, err)
	}
	if validate != nil {
		if err := validate(); err != nil {
			return res, s.wrap(op, err)
		}
	}
	res, err = fn(ctx)
	if err != nil {
		return res, s.wrap(op, err)
	}
	return res, nil
}

// wrap prefixes an error with the backend's name and the operation; an
// error whose text starts with the operation's name already (etcd's
// transaction engine names the operation in its errors) gets the backend's
// name only.
func (s *Store) wrap(op Op, err error) error {
	if strings.HasPrefix(err.Error(), op.Name+": ") {
		return fmt.Errorf("%s: %w", s.b.Name(), err)
	}
	return fmt.Errorf("%s: %s: %w", s.b.Name(), op.Name, err)
}

// decide runs one decision of package rules (run) through the backend.
func decide[R any](ctx context.Context, s *Store, op Op, validate func() error, reads func(Peek) ReadSet, run func(tx *rules.Tx) (R, error)) (R, error) {
	return decideOn[R](ctx, s, op, closures[R]{validate: validate, reads: reads, run: run})
}

// closures are decide's functions, as the input of decideOn.
type closures[R any] struct {
	validate func() error
	reads    func(Peek) ReadSet
	run      func(tx *rules.Tx) (R, error)
}

func (c *closures[R]) check() error {
	if c.validate == nil {
		return nil
	}
	return c.validate()
}

func (c *closures[R]) readSet(p Peek, rs *ReadSet) bool {
	if c.reads == nil {
		return false
	}
	got := c.reads(p)
	rs.Refs = append(rs.Refs, got.Refs...)
	rs.Absent = append(rs.Absent, got.Absent...)
	return true
}

func (c *closures[R]) decide(tx *rules.Tx) (R, error) { return c.run(tx) }

// input is the input of a decision (decideOn), *A: its validation, the
// read set it names (appended to rs; false when it names none) and its run.
// These are methods of the input rather than closures over it, so that the
// input, the call, its read set and its result take one allocation.
type input[A, R any] interface {
	*A
	check() error
	readSet(p Peek, rs *ReadSet) bool
	decide(tx *rules.Tx) (R, error)
}

// decideOn runs one decision of package rules through the backend, with
// the operation's input arg (P is *A, its methods the decision's steps).
// The decision is the operation and the backend's Call at once, so that
// the call, its input, its read set and its result take one allocation (the
// steady-state writes are a few dozen microseconds of CPU, of which
// allocations are a good part).
func decideOn[R, A any, P input[A, R]](ctx context.Context, s *Store, op Op, arg A) (R, error) {
	d := &decision[A, R, P]{s: s, arg: arg}
	d.Call = Call{Op: op, Result: &d.res, runner: d}
	// The validation is the first step of d.do rather than Do's own, which
	// would take a second function: Do checks the context, then d.do
	// validates before the backend decides, the same steps in the same
	// order.
	return Do(ctx, s, op, nil, d.do)
}

// decision is one decideOn call: the backend's Call, the input, the result
// of the last run, and room for a small read set.
type decision[A, R any, P input[A, R]] struct {
	Call
	s      *Store
	arg    A
	res    R
	rs     ReadSet
	refBuf [4]Ref
}

// do validates the input, then runs the decision through the backend.
func (d *decision[A, R, P]) do(ctx context.Context) (R, error) {
	var zero R
	if err := P(&d.arg).check(); err != nil {
		return zero, err
	}
	if err := d.s.b.Decide(ctx, &d.Call); err != nil {
		return zero, err
	}
	return d.res, nil
}

// run is one run of the decision, its result kept (decider).
func (d *decision[A, R, P]) run(tx *rules.Tx) error {
	r, err := P(&d.arg).decide(tx)
	d.res = r
	return err
}

// readSet is the decision's read set (decider).
func (d *decision[A, R, P]) readSet(p Peek) (ReadSet, bool) {
	d.rs = ReadSet{Refs: d.refBuf[:0]}
	ok := P(&d.arg).readSet(p, &d.rs)
	return d.rs, ok
}

// list runs one location list through the backend.
func list[T any](ctx context.Context, s *Store, q *ListQuery) (location.Page[T], error) {
	return Do(ctx, s, q.Op, nil, func(ctx context.Context) (location.Page[T], error) {
		page, err := s.b.List(ctx, q)
		if err != nil {
			return location.Page[T]{}, err
		}
		items := make([]T, 0, len(page.Rows))
		for _, r := range page.Rows {
			row, ok := r.(T)
			if !ok {
				return location.Page[T]{}, fmt.Errorf("%w: %s lists a %T", location.ErrInternal, q.Table, r)
			}
			items = append(items, row)
		}
		return location.Page[T]{Items: items, ContinuationToken: page.Token}, nil
	})
}

// listQuery is a ListQuery of rows of type T, its functions typed.
func listQuery[T any](op Op, narrow string, filter any, match func(*T) bool, page location.PageRequest) *ListQuery {
	return &ListQuery{Op: op, Table: op.Table, Narrow: narrow, Filter: filter, Page: page,
		Match: func(row any) bool {
			r, ok := row.(T)
			return ok && match(&r)
		}}
}

// resolved returns a pointer to row when ok, else nil (Resolve*).
func resolved[T any](row T, _ int64, ok bool) *T {
	if !ok {
		return nil
	}
	return &row
}

// Compile-time checks: Store is every store interface.
var (
	_ location.Store                 = (*Store)(nil)
	_ location.ChangeWatcher         = (*Store)(nil)
	_ location.MeshNodeChangeStamper = (*Store)(nil)
	_ location.OwnerLivenessReader   = (*Store)(nil)
)
