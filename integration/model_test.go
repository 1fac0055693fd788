package integration

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// The sequential model for porcupine: the in-memory reference store. Its
// transitions are deterministic functions of its state and the call (a
// frozen clock; reservation ids drawn from a source seeded with a hash of
// the state, so equal states issue equal ids). A state holds a memstore
// that is never changed once the state exists: a step clones it
// (memstore.Store.Clone), runs the call (translated into the model's
// numbers) on the clone, and compares the answers under the state's
// renaming, which the step extends.
//
// Two states are equal (porcupine's cache) when their renamings and a deep
// dump of their memstores' contents are equal. The dump is most of a
// step's cost, so a state computes it only when asked: when porcupine
// compares it with a state that linearized the same calls (its cache is
// keyed by those alone, no state hash), or when a step from it draws a
// reservation id.

// outcome classifies a call's result.
type outcome int

const (
	// outcomeOK: the call answered; its result is compared with the model's.
	outcomeOK outcome = iota
	// outcomeUnknown: the call failed in a way that does not say whether it
	// was applied (deadline, lost connection, unresolved lost response):
	// the model applies it and accepts any answer; its return is at the end
	// of time, so it may also take effect after every other call.
	outcomeUnknown
)

// opInput is porcupine's input of one operation.
type opInput struct {
	id     int
	client int
	c      call
}

// opOutput is porcupine's output of one operation.
type opOutput struct {
	kind outcome
	res  any
	err  error
}

// modelState is one state of the model.
type modelState struct {
	store *memstore.Store
	ren   *conformance.Renamer
	once  sync.Once
	dump  string
	hash  uint64
}

// fingerprint returns the state's dump and its hash, computed on first use.
func (s *modelState) fingerprint() (string, uint64) {
	s.once.Do(func() { s.dump, s.hash = dumpState(s.store, s.ren) })
	return s.dump, s.hash
}

// stateSeededRandom is the id source of a step from a state: seeded, on
// its first read, with the state's hash.
type stateSeededRandom struct {
	from *modelState
	r    io.Reader
}

func (l *stateSeededRandom) Read(p []byte) (int, error) {
	if l.r == nil {
		_, h := l.from.fingerprint()
		l.r = seededRandom(h)
	}
	return l.r.Read(p)
}

// seededRandom is a deterministic id source.
func seededRandom(seed uint64) io.Reader {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	return rand.NewChaCha8(key)
}

// modelConfig fixes what the model's stores are made of.
type modelConfig struct {
	now time.Time
}

// options are the options of a model store whose ids come from random.
func (mc modelConfig) options(random io.Reader) memstore.Options {
	now := mc.now
	return memstore.Options{Clock: func() time.Time { return now }, Random: random}
}

// modelHooks are the lease hooks of a model store: expiry is
// ExpireOwnerLease followed by a read, which drops the expired entry as
// etcd drops the owner key of a revoked lease (the conformance random
// tester does the same).
func modelHooks(s *memstore.Store) leaseHooks {
	return leaseHooks{expire: func(ctx context.Context, owner string) error {
		if err := s.ExpireOwnerLease(ctx, owner); err != nil {
			return err
		}
		_, err := s.ReadOwnerLease(ctx, owner)
		return err
	}}
}

// modelStats counts the model's work for the reports.
type modelStats struct {
	mu               sync.Mutex
	steps            int
	lastDisagreement string
}

// newModel returns the porcupine model.
func newModel(mc modelConfig, stats *modelStats) porcupine.Model {
	init := func() any {
		return &modelState{store: memstore.New(mc.options(seededRandom(0))), ren: conformance.NewRenamer(false)}
	}
	step := func(state, input, output any) (bool, any) {
		s, in, out := state.(*modelState), input.(opInput), output.(opOutput)
		stats.mu.Lock()
		stats.steps++
		stats.mu.Unlock()
		mcall := in.c.toModel(s.ren)
		st := s.store.Clone(mc.options(&stateSeededRandom{from: s}))
		res, err := mcall.run(context.Background(), st, modelHooks(st))
		ren := s.ren
		if out.kind == outcomeOK {
			if err != nil {
				stats.note(fmt.Sprintf("%v: model error %v", in.c, err))
				return false, nil
			}
			ren = s.ren.Clone()
			if d := agree(mcall, res, out.res, ren); d != "" {
				stats.note(fmt.Sprintf("%v: %s", in.c, d))
				return false, nil
			}
		}
		return true, &modelState{store: st, ren: ren}
	}
	return porcupine.Model{
		Init: init,
		Step: step,
		Equal: func(a, b any) bool {
			da, _ := a.(*modelState).fingerprint()
			db, _ := b.(*modelState).fingerprint()
			return da == db
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(opInput), output.(opOutput)
			return fmt.Sprintf("%v -> %s", in.c, describeOutput(out))
		},
	}
}

// note keeps the last disagreement (for reports of illegal histories).
func (m *modelStats) note(d string) {
	m.mu.Lock()
	m.lastDisagreement = d
	m.mu.Unlock()
}

// describeOutput renders an output for reports.
func describeOutput(o opOutput) string {
	if o.kind == outcomeUnknown {
		return fmt.Sprintf("unknown (%v)", o.err)
	}
	return fmt.Sprintf("%+v", o.res)
}

// dumpState is a canonical text of the model store's contents (every
// field, by reflection, except its lock, clock, id source, watchers and the
// embedded storecore.Store, which holds no state) and of the renaming, and
// its hash.
func dumpState(st *memstore.Store, r *conformance.Renamer) (string, uint64) {
	var b strings.Builder
	v := reflect.ValueOf(st).Elem()
	for i := range v.NumField() {
		switch v.Type().Field(i).Name {
		case "mu", "clock", "random", "watchers", "Store":
			continue
		}
		b.WriteString(v.Type().Field(i).Name)
		b.WriteByte('=')
		dumpValue(&b, v.Field(i))
		b.WriteByte(';')
	}
	b.WriteString(r.Key())
	s := b.String()
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return s, h.Sum64()
}

// dumpList writes n elements between start and end, each written by elem
// and followed by a comma.
func dumpList(b *strings.Builder, start, end byte, n int, elem func(i int)) {
	b.WriteByte(start)
	for i := range n {
		elem(i)
		b.WriteByte(',')
	}
	b.WriteByte(end)
}

// dumpValue writes v deeply: maps in key order, pointers followed.
func dumpValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid:
		b.WriteString("nil")
	case reflect.Bool:
		fmt.Fprint(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		fmt.Fprint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		fmt.Fprint(b, v.Float())
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if v.Kind() == reflect.Interface {
			b.WriteString(v.Elem().Type().String())
		}
		dumpValue(b, v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("nil")
			return
		}
		dumpList(b, '[', ']', v.Len(), func(i int) { dumpValue(b, v.Index(i)) })
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		type kv struct{ k, v string }
		entries := make([]kv, 0, v.Len())
		it := v.MapRange()
		for it.Next() {
			var kb, vb strings.Builder
			dumpValue(&kb, it.Key())
			dumpValue(&vb, it.Value())
			entries = append(entries, kv{kb.String(), vb.String()})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].k < entries[j].k })
		dumpList(b, '{', '}', len(entries), func(i int) {
			b.WriteString(entries[i].k)
			b.WriteByte(':')
			b.WriteString(entries[i].v)
		})
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			// wall and ext hold the instant; the location is always UTC.
			dumpValue(b, v.Field(0))
			b.WriteByte('/')
			dumpValue(b, v.Field(1))
			return
		}
		dumpList(b, '{', '}', v.NumField(), func(i int) { dumpValue(b, v.Field(i)) })
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		b.WriteString(v.Kind().String())
	}
}
