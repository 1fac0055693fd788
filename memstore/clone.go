package memstore

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
	c.state = s.state.clone()
	return c
}
