package txn

// Write is one guarded write of a Commit: a put of Value, or a delete.
// Value's bytes must not be modified once the Write is made (the engine
// sends them and caches them as they are).
type Write struct {
	Key    string
	Value  []byte
	Delete bool
	// Derived, when set, is what a reader would derive from Value (its
	// decoded form): when the commit applies, it is attached to the
	// observation of the written key that the engine's cache keeps
	// (Observation.SetDerived), so that the next decision reading the key
	// from the cache does not derive it again. It is shared from then on:
	// nobody may modify it. A Derived that is a DerivedAt is asked for the
	// value at the commit's revision.
	Derived any
}

// DerivedAt is a Write.Derived that depends on the revision the commit is
// applied at (which is, for example, the written key's ModRevision).
type DerivedAt interface {
	// DeriveAt returns the derived value of the write applied at
	// revision.
	DeriveAt(revision int64) any
}

// Put returns a write that stores value under key.
func Put(key string, value []byte) Write { return Write{Key: key, Value: value} }

// Delete returns a write that removes key.
func Delete(key string) Write { return Write{Key: key, Delete: true} }

// Commit is what a decision wants written.
type Commit struct {
	// Writes are guarded: each key must have been observed through the View
	// (a write of an unobserved key makes the engine fetch it and run the
	// decision again), and the transaction re-asserts that observation.
	// Every put value must contain the View's nonce. Keys are distinct.
	Writes []Write
	// Unguarded writes are applied without any compare: derived entries
	// (such as an owner index) whose consistency follows from the guarded
	// writes they accompany. Put values must contain the nonce. Keys are
	// distinct from every other key of the commit.
	Unguarded []Write
	// Touch lists keys that are put unconditionally with the nonce as value
	// (change stamps: their Version counts the transactions that touched
	// them). Duplicates are merged; a key may not also be in Writes.
	Touch []string
}

// Empty reports whether the commit writes nothing.
func (c Commit) Empty() bool {
	return len(c.Writes) == 0 && len(c.Unguarded) == 0 && len(c.Touch) == 0
}

// writeCount is the number of guarded and unguarded writes.
func (c *Commit) writeCount() int { return len(c.Writes) + len(c.Unguarded) }

// hasPut reports whether the commit writes at least one value (that carries
// the nonce).
func (c *Commit) hasPut() bool {
	if len(c.Touch) > 0 {
		return true
	}
	for _, ws := range [2][]Write{c.Writes, c.Unguarded} {
		for i := range ws {
			if !ws[i].Delete {
				return true
			}
		}
	}
	return false
}
