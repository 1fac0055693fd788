package memstore

import "maps"

// Clone returns an independent store with the same contents (tables, row
// generation counters, owner leases, counters and change stamps), reading
// opts' clock and id source. Subscriptions of WatchChanges are not copied.
// Stored values are immutable (every write replaces them), so the copy
// shares them. Checkers use it to branch the model's state (for example a
// linearizability checker exploring orders of concurrent calls).
func (s *Store) Clone(opts Options) *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := New(opts)
	for t, m := range s.tables {
		c.tables[t] = maps.Clone(m)
	}
	for t, m := range s.gens {
		c.gens[t] = maps.Clone(m)
	}
	c.leases = maps.Clone(s.leases)
	c.leaseCounter = s.leaseCounter
	c.stamps = maps.Clone(s.stamps)
	c.meshNodeStamps = maps.Clone(s.meshNodeStamps)
	c.versionCounter, c.objectCounter, c.ownerCounter = s.versionCounter, s.objectCounter, s.ownerCounter
	c.scanRevision = s.scanRevision
	return c
}
