package etcdstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Raw-etcd twins of the store's writes. A twin replays, under a root of its
// own, the very transactions the store sent for one call (captured once by
// txnCapture): the same compares on the same kinds of key, the same puts
// with the same value bytes, the same deletes and Else reads. Compare values
// come from the twin's own bookkeeping of its keys, which it keeps from its
// own responses (as the store keeps its cache); a key it has never seen is
// read first, all such keys in one request. So a twin makes the fewest
// round trips a hand-written client of the same layout would, and the
// store's extra reads, if any, show in the comparison.

// txnCapture wraps a KV and, while on, records the transactions committed
// through it.
type txnCapture struct {
	clientv3.KV
	// on is read without the lock by every transaction (an atomic load, so
	// that the measured calls, which run with recording off, do not take a
	// lock the twin does not take).
	on   atomic.Bool
	mu   sync.Mutex
	txns []txnTemplate
}

// start begins recording.
func (c *txnCapture) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.txns = nil
	c.on.Store(true)
}

// stop ends recording and returns the recorded transactions.
func (c *txnCapture) stop() []txnTemplate {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on.Store(false)
	return c.txns
}

// Txn implements clientv3.KV. While recording is off, transactions pass
// through untouched (the measured calls pay one atomic load for the
// capture).
func (c *txnCapture) Txn(ctx context.Context) clientv3.Txn {
	if !c.on.Load() {
		return c.KV.Txn(ctx)
	}
	return &capturingTxn{Txn: c.KV.Txn(ctx), c: c}
}

// cmpTemplate is one compare of a captured transaction: its target (MOD,
// CREATE, LEASE…), result and key. The store compares with "=", and with
// "<" on the ModRevision of a delete fence (nothing deleted under it since
// an absence was read).
type cmpTemplate struct {
	target pb.Compare_CompareTarget
	result pb.Compare_CompareResult
	key    string
}

// opKind is the kind of a captured operation.
type opKind int

const (
	opGet opKind = iota + 1
	opPut
	opDelete
)

// opTemplate is one operation of a captured transaction.
type opTemplate struct {
	kind  opKind
	key   string
	value string
}

// txnTemplate is one captured transaction.
type txnTemplate struct {
	cmps      []cmpTemplate
	then, els []opTemplate
	succeeded bool
}

// writes reports whether the transaction writes (a read-only transaction
// is a read of the store's, which twins replace by their own).
func (t *txnTemplate) writes() bool {
	for _, o := range t.then {
		if o.kind != opGet {
			return true
		}
	}
	return false
}

// renamed returns a copy of the transaction with every key renamed.
func (t *txnTemplate) renamed(rename func(string) string) txnTemplate {
	out := txnTemplate{succeeded: t.succeeded, cmps: make([]cmpTemplate, len(t.cmps))}
	for i, c := range t.cmps {
		c.key = rename(c.key)
		out.cmps[i] = c
	}
	ops := func(tos []opTemplate) []opTemplate {
		r := make([]opTemplate, len(tos))
		for i, o := range tos {
			o.key = rename(o.key)
			r[i] = o
		}
		return r
	}
	out.then, out.els = ops(t.then), ops(t.els)
	return out
}

// keys returns every key the transaction names.
func (t *txnTemplate) keys() []string {
	var out []string
	for _, c := range t.cmps {
		out = append(out, c.key)
	}
	for _, o := range append(t.then[:len(t.then):len(t.then)], t.els...) {
		out = append(out, o.key)
	}
	return out
}

// capturingTxn records a transaction as it is built and committed.
type capturingTxn struct {
	clientv3.Txn
	c *txnCapture
	t txnTemplate
}

func (t *capturingTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	for _, c := range cs {
		pc := c.GetCompare()
		t.t.cmps = append(t.t.cmps, cmpTemplate{target: pc.Target, result: pc.Result, key: string(c.KeyBytes())})
	}
	t.Txn = t.Txn.If(cs...)
	return t
}

func templatesOf(ops []clientv3.Op) []opTemplate {
	out := make([]opTemplate, 0, len(ops))
	for _, o := range ops {
		k := opTemplate{key: string(o.KeyBytes())}
		switch {
		case o.IsPut():
			k.kind, k.value = opPut, string(o.ValueBytes())
		case o.IsDelete():
			k.kind = opDelete
		default:
			k.kind = opGet
		}
		out = append(out, k)
	}
	return out
}

func (t *capturingTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.t.then = append(t.t.then, templatesOf(ops)...)
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *capturingTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.t.els = append(t.t.els, templatesOf(ops)...)
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *capturingTxn) Commit() (*clientv3.TxnResponse, error) {
	resp, err := t.Txn.Commit()
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if err == nil {
		t.t.succeeded = resp.Succeeded
		t.c.txns = append(t.c.txns, t.t)
	}
	return resp, err
}

// writeTemplates keeps the transactions that write and checks that each of
// them was applied.
func writeTemplates(txns []txnTemplate) ([]txnTemplate, error) {
	var out []txnTemplate
	for _, t := range txns {
		if !t.writes() {
			continue
		}
		if !t.succeeded {
			return nil, fmt.Errorf("bench: a captured transaction failed its guards (%d compares)", len(t.cmps))
		}
		for _, c := range t.cmps {
			if c.result != pb.Compare_EQUAL && (c.result != pb.Compare_LESS || c.target != pb.Compare_MOD) {
				return nil, fmt.Errorf("bench: compare %v on %q is not an equality", c.result, c.key)
			}
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: the call wrote nothing")
	}
	return out, nil
}

// keyState is what a twin knows of one of its keys.
type keyState struct {
	present             bool
	mod, create, leased int64
}

// rawTwin is the raw-etcd side of one caller. Not safe for concurrent use:
// every caller has its own.
type rawTwin struct {
	kv    clientv3.KV
	lease clientv3.Lease
	known map[string]keyState
}

func newRawTwin(kv clientv3.KV, lease clientv3.Lease) *rawTwin {
	return &rawTwin{kv: kv, lease: lease, known: map[string]keyState{}}
}

// learn reads the keys the twin has not seen yet, in one request.
func (t *rawTwin) learn(ctx context.Context, keys []string) error {
	var ask []string
	seen := map[string]bool{}
	for _, k := range keys {
		if _, ok := t.known[k]; !ok && !seen[k] {
			seen[k] = true
			ask = append(ask, k)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	ops := make([]clientv3.Op, len(ask))
	for i, k := range ask {
		ops[i] = clientv3.OpGet(k)
	}
	resp, err := t.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return err
	}
	for i, k := range ask {
		st := keyState{}
		if kvs := resp.Responses[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
			st = keyState{present: true, mod: kvs[0].ModRevision, create: kvs[0].CreateRevision, leased: kvs[0].Lease}
		}
		t.known[k] = st
	}
	return nil
}

// call replays templates with keys renamed: first one read of the compared
// keys it does not know, then each transaction.
func (t *rawTwin) call(ctx context.Context, tms []txnTemplate, rename func(string) string) error {
	var compared []string
	for _, tm := range tms {
		for _, c := range tm.cmps {
			compared = append(compared, rename(c.key))
		}
	}
	if err := t.learn(ctx, compared); err != nil {
		return err
	}
	for i := range tms {
		if err := t.replay(ctx, &tms[i], rename); err != nil {
			return err
		}
	}
	return nil
}

// replay sends one template with the twin's own revisions.
func (t *rawTwin) replay(ctx context.Context, tm *txnTemplate, rename func(string) string) error {
	cmps := make([]clientv3.Cmp, 0, len(tm.cmps))
	for _, c := range tm.cmps {
		k := rename(c.key)
		st := t.known[k]
		switch c.target {
		case pb.Compare_MOD:
			if c.result == pb.Compare_LESS {
				cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "<", st.mod+1))
				break
			}
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", st.mod))
		case pb.Compare_CREATE:
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", st.create))
		case pb.Compare_LEASE:
			cmps = append(cmps, clientv3.Compare(clientv3.LeaseValue(k), "=", clientv3.LeaseID(st.leased)))
		default:
			return fmt.Errorf("bench: twin cannot replay a %v compare", c.target)
		}
	}
	ops := func(tos []opTemplate) []clientv3.Op {
		out := make([]clientv3.Op, 0, len(tos))
		for _, o := range tos {
			k := rename(o.key)
			switch o.kind {
			case opPut:
				if l := t.known[k].leased; l != 0 {
					out = append(out, clientv3.OpPut(k, o.value, clientv3.WithLease(clientv3.LeaseID(l))))
				} else {
					out = append(out, clientv3.OpPut(k, o.value))
				}
			case opDelete:
				out = append(out, clientv3.OpDelete(k))
			default:
				out = append(out, clientv3.OpGet(k))
			}
		}
		return out
	}
	resp, err := t.kv.Txn(ctx).If(cmps...).Then(ops(tm.then)...).Else(ops(tm.els)...).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return fmt.Errorf("bench: twin transaction failed its guards at revision %d", resp.Header.Revision)
	}
	rev := resp.Header.Revision
	for _, o := range tm.then {
		k := rename(o.key)
		switch o.kind {
		case opPut:
			st := t.known[k]
			if !st.present {
				st = keyState{present: true, create: rev, leased: st.leased}
			}
			st.mod = rev
			t.known[k] = st
		case opDelete:
			t.known[k] = keyState{}
		}
	}
	return nil
}

// mirror copies the store's keys to the twin (renamed), values as they are;
// a key attached to a lease gets a fresh lease of leaseSeconds. Then the twin
// learns every copied key.
func (t *rawTwin) mirror(ctx context.Context, src clientv3.KV, keys []string, rename func(string) string, leaseSeconds int64) error {
	leases := map[int64]clientv3.LeaseID{}
	var copied []string
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		got, err := src.Get(ctx, k)
		if err != nil {
			return err
		}
		dst := rename(k)
		copied = append(copied, dst)
		if len(got.Kvs) == 0 {
			continue
		}
		kv := got.Kvs[0]
		var opts []clientv3.OpOption
		if kv.Lease != 0 {
			id, ok := leases[kv.Lease]
			if !ok {
				g, err := t.lease.Grant(ctx, leaseSeconds)
				if err != nil {
					return err
				}
				id, leases[kv.Lease] = g.ID, g.ID
			}
			opts = append(opts, clientv3.WithLease(id))
		}
		if _, err := t.kv.Put(ctx, dst, string(kv.Value), opts...); err != nil {
			return err
		}
	}
	return t.learn(ctx, copied)
}

// renamer returns a function replacing the store's root by the twin's (and
// any extra old/new pairs) in keys.
func renamer(storeRoot, twinRoot string, extra ...string) func(string) string {
	return strings.NewReplacer(append([]string{storeRoot, twinRoot}, extra...)...).Replace
}

// putAll writes kvs (pairs of key, value) in transactions of at most
// maxOps puts, sent by up to workers requests at a time.
func putAll(ctx context.Context, kv clientv3.KV, kvs [][2]string, maxOps, workers int) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs error
	)
	chunks := make(chan [][2]string)
	for range workers {
		wg.Go(func() {
			for chunk := range chunks {
				ops := make([]clientv3.Op, len(chunk))
				for i, p := range chunk {
					ops[i] = clientv3.OpPut(p[0], p[1])
				}
				if _, err := kv.Txn(ctx).Then(ops...).Commit(); err != nil {
					mu.Lock()
					errs = err
					mu.Unlock()
				}
			}
		})
	}
	for start := 0; start < len(kvs); start += maxOps {
		chunks <- kvs[start:min(start+maxOps, len(kvs))]
	}
	close(chunks)
	wg.Wait()
	return errs
}
