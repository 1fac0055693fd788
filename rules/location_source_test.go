package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// lsLease is one owner lease of an lsSource.
type lsLease struct {
	generation int64
	live       bool
}

// The location catalogue's scenarios run through a store in conformance;
// the tests of this package check the location rules' decision tables,
// plans and keys on an lsSource, with the catalogue's rows from package
// fixture.

// lsSource is a Source for the location-table decisions: rows, leases and
// the memstore generation rule (dense per key, mesh nodes restart at 1).
// apply makes a plan real so that tests can chain decisions.
type lsSource struct {
	now    time.Time
	rows   map[Table]map[string]Record
	gens   map[Table]map[string]int64
	leases map[string]lsLease
	stamps map[StampCounter]int64
	mesh   map[string]int64
}

func newLSSource() *lsSource {
	return &lsSource{
		now:    fixture.T0(),
		rows:   map[Table]map[string]Record{},
		gens:   map[Table]map[string]int64{},
		leases: map[string]lsLease{},
		stamps: map[StampCounter]int64{},
		mesh:   map[string]int64{},
	}
}

func (s *lsSource) Now() time.Time { return s.now }

func (s *lsSource) Get(t Table, key string) (Record, bool) {
	r, ok := s.rows[t][key]
	return r, ok
}

func (s *lsSource) LiveLease(ownerID string) (int64, bool) {
	l, ok := s.leases[ownerID]
	return l.generation, ok && l.live
}

func (s *lsSource) NextGeneration(t Table, key string) int64 {
	if _, exists := s.rows[t][key]; t == location.TableMeshNodes && !exists {
		return 1
	}
	return s.gens[t][key] + 1
}

func (s *lsSource) CanIssue(int64, int64, int64) bool                 { return true }
func (s *lsSource) IssueVersion() location.StoreVersion               { return "1" }
func (s *lsSource) IssueObjectGeneration(location.AuthorityKey) int64 { return 1 }
func (s *lsSource) IssueOwnerGeneration(location.AuthorityKey) int64  { return 1 }
func (s *lsSource) NewReservationID() string                          { return "00000000-0000-4000-8000-000000000000" }

// lease sets ownerID's lease.
func (s *lsSource) lease(ownerID string, generation int64, live bool) {
	s.leases[ownerID] = lsLease{generation: generation, live: live}
}

// put stores a row directly with a generation (also the key's counter).
func (s *lsSource) put(t Table, key string, v any, generation int64) {
	if s.rows[t] == nil {
		s.rows[t] = map[string]Record{}
	}
	s.rows[t][key] = Record{Value: v, Generation: generation}
	if generation > 0 {
		if s.gens[t] == nil {
			s.gens[t] = map[string]int64{}
		}
		s.gens[t][key] = generation
	}
}

// apply makes a plan real, as memstore does.
func (s *lsSource) apply(p *Plan) {
	for _, w := range p.Writes {
		if w.Value == nil {
			delete(s.rows[w.Table], w.Key)
			continue
		}
		s.put(w.Table, w.Key, w.Value, w.Generation)
	}
	for _, c := range p.Stamps {
		s.stamps[c]++
	}
	for _, m := range p.MeshNodeStamps {
		s.mesh[m]++
	}
}

// lsRun runs one decision on src, applies its plan and returns the result
// and the plan.
func lsRun[R any](t *testing.T, src *lsSource, decision func(*Tx) (R, error)) (R, *Plan) {
	t.Helper()
	tx := NewTx(src)
	res, err := decision(tx)
	require.NoError(t, err)
	src.apply(tx.Plan())
	return res, tx.Plan()
}

// lsStored, lsStale and lsConflict are the expected write results.
func lsStored(g int64, at time.Time) location.WriteResult {
	return location.WriteResult{Status: location.Stored, Generation: g, UpdatedAt: at}
}

func lsStale() location.WriteResult {
	return location.WriteResult{Status: location.IgnoredStale, UpdatedAt: location.Epoch()}
}

func lsConflict() location.WriteResult {
	return location.WriteResult{Status: location.RejectedConflict, UpdatedAt: location.Epoch()}
}

// lsStamp is one stamp counter for the expected plans.
func lsStamp(kind location.LocationKind, mesh string) StampCounter {
	return StampCounter{Kind: kind.Scope(), Mesh: mesh}
}

func lsPtr[T any](v T) *T { return &v }
