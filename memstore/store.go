// Package memstore is the in-memory reference implementation of
// location.Store: the zlink framework's in-memory location and authority
// stores ported to Go, with the fixes docs/deviations.md lists.
//
// The store methods are package storecore's (shared with etcdstore), and the
// decisions package rules'; this package is the backend they run on: the
// state, under one mutex held for the whole of every call, with the
// reference's dense counters. It is deterministic: the same calls with the
// same clock and id source give the same results, so it serves as the model
// when checking histories of other stores.
package memstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// Clock is the store's time source; nil means location.SystemClock.
	Clock location.Clock
	// Random supplies the bytes of reservation ids (UUID v4); nil means
	// crypto/rand. A seeded reader makes the store fully deterministic.
	Random io.Reader
	// Observer sees every operation (storecore.Observer); nil observes
	// nothing.
	Observer storecore.Observer
}

// Store is the in-memory location store: every method of location.Store,
// location.ChangeWatcher and location.MeshNodeChangeStamper, and the
// ExpireOwnerLease hook, comes from the embedded storecore.Store over this
// store's state. Safe for concurrent use.
type Store struct {
	storecore.Store

	mu     sync.Mutex
	clock  location.Clock
	random io.Reader

	state

	// watchers are the live WatchChanges subscriptions (watch_changes.go).
	watchers map[*changeWatcher]struct{}
}

// state is everything the store holds: its tables, row generation
// counters, owner leases, counters and change stamps. Stored values are
// immutable (every write replaces them), so copies of the state share them.
type state struct {
	tables map[rules.Table]map[string]rules.Record
	// gens are the per-key row generation counters; they survive deletion.
	gens map[rules.Table]map[string]int64

	leases       map[string]ownerLease
	leaseCounter int64

	stamps         map[rules.StampCounter]int64
	meshNodeStamps map[string]int64

	versionCounter int64
	objectCounter  int64
	ownerCounter   int64
	scanRevision   int64
}

// clone returns an independent copy of the state: its own maps, the same
// values.
func (st *state) clone() state {
	c := *st
	c.tables = make(map[rules.Table]map[string]rules.Record, len(st.tables))
	for t, m := range st.tables {
		c.tables[t] = maps.Clone(m)
	}
	c.gens = make(map[rules.Table]map[string]int64, len(st.gens))
	for t, m := range st.gens {
		c.gens[t] = maps.Clone(m)
	}
	c.leases = maps.Clone(st.leases)
	c.stamps = maps.Clone(st.stamps)
	c.meshNodeStamps = maps.Clone(st.meshNodeStamps)
	return c
}

// ownerLease is one owner-lease entry; an expired entry may linger.
type ownerLease struct {
	token     location.OwnerToken
	expiresAt time.Time
}

// New returns an empty store.
func New(opts Options) *Store {
	s := &Store{
		clock:  opts.Clock,
		random: opts.Random,
		state: state{
			tables:         map[rules.Table]map[string]rules.Record{},
			gens:           map[rules.Table]map[string]int64{},
			leases:         map[string]ownerLease{},
			stamps:         map[rules.StampCounter]int64{},
			meshNodeStamps: map[string]int64{},
		},
	}
	if s.clock == nil {
		s.clock = location.SystemClock
	}
	if s.random == nil {
		s.random = rand.Reader
	}
	s.Store = storecore.New(backend{s}, storecore.Options{Observer: opts.Observer, PurgeExpiredTerminals: true})
	return s
}

// now reads the clock once, at millisecond precision.
func (s *Store) now() time.Time { return location.Millis(s.clock()) }

// backend is the store's side of storecore.Backend: its state under its
// mutex. Every call holds the mutex from the moment it reads the clock to
// the moment its effects are applied, so calls are atomic and their times
// follow their order, exactly like the single-threaded reference.
type backend struct{ s *Store }

// Name implements storecore.Backend.
func (backend) Name() string { return "memstore" }

// Now implements storecore.Backend.
func (b backend) Now() time.Time { return b.s.now() }

// Decide runs the decision under the store lock and applies its plan when
// it succeeds. It implements storecore.Backend.
func (b backend) Decide(_ context.Context, c *storecore.Call) error {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.newSource()
	tx := rules.NewTx(src)
	if err := c.Run(tx); err != nil {
		return err
	}
	s.apply(tx.Plan(), src)
	return nil
}

// apply makes a plan real. Called with s.mu held.
func (s *Store) apply(p *rules.Plan, src *source) {
	for _, w := range p.Writes {
		t := s.tables[w.Table]
		if t == nil {
			t = map[string]rules.Record{}
			s.tables[w.Table] = t
		}
		if w.Value == nil {
			delete(t, w.Key)
			continue
		}
		t[w.Key] = rules.Record{Value: w.Value, Generation: w.Generation}
		if w.Generation > 0 {
			g := s.gens[w.Table]
			if g == nil {
				g = map[string]int64{}
				s.gens[w.Table] = g
			}
			g[w.Key] = w.Generation
		}
	}
	for _, c := range p.Stamps {
		s.stamps[c]++
	}
	for _, m := range p.MeshNodeStamps {
		s.meshNodeStamps[m]++
	}
	if p.ScanRevisionBumped {
		s.scanRevision++
	}
	s.versionCounter, s.objectCounter, s.ownerCounter = src.version, src.object, src.owner
	s.notifyWatchers(p)
}

// source is the rules.Source of one decision: the store's maps under its lock.
type source struct {
	s                      *Store
	now                    time.Time
	version, object, owner int64 // counters including this decision's issues
}

// newSource reads the clock and starts a decision's source. Called with
// s.mu held.
func (s *Store) newSource() *source {
	return &source{s: s, now: s.now(), version: s.versionCounter, object: s.objectCounter, owner: s.ownerCounter}
}

func (src *source) Now() time.Time { return src.now }

func (src *source) Get(t rules.Table, key string) (rules.Record, bool) {
	r, ok := src.s.tables[t][key]
	return r, ok
}

func (src *source) LiveLease(ownerID string) (int64, bool) {
	l, ok := src.s.leases[ownerID]
	if !ok || !l.expiresAt.After(src.now) {
		return 0, false
	}
	return l.token.LeaseGeneration, true
}

func (src *source) NextGeneration(t rules.Table, key string) int64 {
	if t == location.TableMeshNodes {
		if _, exists := src.s.tables[t][key]; !exists {
			return 1 // anomaly A-04, reproduced
		}
	}
	return src.s.gens[t][key] + 1
}

func (src *source) CanIssue(versions, objects, owners int64) bool {
	return versions <= location.MaxGeneration-src.version &&
		objects <= location.MaxGeneration-src.object &&
		owners <= location.MaxGeneration-src.owner
}

func (src *source) IssueVersion() location.StoreVersion {
	src.version++
	return location.StoreVersion(fmt.Sprint(src.version))
}

func (src *source) IssueObjectGeneration(location.AuthorityKey) int64 {
	src.object++
	return src.object
}

func (src *source) IssueOwnerGeneration(location.AuthorityKey) int64 {
	src.owner++
	return src.owner
}

func (src *source) NewReservationID() string {
	var b [16]byte
	if _, err := io.ReadFull(src.s.random, b[:]); err != nil {
		// crypto/rand never fails on supported platforms; a custom reader
		// that runs dry falls back to the counters, which stay unique.
		copy(b[:], fmt.Sprintf("%016x", src.version))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
