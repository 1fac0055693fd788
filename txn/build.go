package txn

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// build turns a decision's view and commit into a guarded transaction,
// checking the commit's invariants and the server limits first. The
// caller sets Earlier and SentAfter.
func (e *Engine) build(op string, v *View, c *Commit) (Guarded, error) {
	c.Touch = append(c.Touch, e.deletedFences(c)...)
	if !c.hasPut() && e.markerKey != "" {
		c.Touch = append(c.Touch, e.markerKey)
	}
	c.Touch = dedupe(c.Touch)
	nonce := []byte(v.nonce)
	n := c.writeCount() + len(c.Touch)
	seen := newKeySet(n)
	g := Guarded{Read: v.order, Nonce: v.nonce, Before: v.obs,
		Then: slices.Grow(v.then[:0], n), Puts: slices.Grow(v.puts[:0], n)}
	size := 0
	for w := range c.allWrites() {
		if !seen.add(w.Key) {
			return Guarded{}, fmt.Errorf("%s: %w: key %q written twice in one commit", op, location.ErrInternal, w.Key)
		}
		if w.Delete {
			g.Then = append(g.Then, clientv3.OpDelete(w.Key))
			g.Deletes = append(g.Deletes, w.Key)
			size += keyCost(w.Key)
			continue
		}
		if !bytes.Contains(w.Value, nonce) {
			return Guarded{}, fmt.Errorf("%s: %w: the value of %q does not carry the write nonce", op, location.ErrInternal, w.Key)
		}
		g.Then = append(g.Then, PutBytes(w.Key, w.Value))
		g.Puts = append(g.Puts, w.Key)
		size += keyCost(w.Key) + len(w.Value)
	}
	for _, k := range c.Touch {
		if !seen.add(k) {
			return Guarded{}, fmt.Errorf("%s: %w: key %q both written and touched", op, location.ErrInternal, k)
		}
		g.Then = append(g.Then, clientv3.OpPut(k, v.nonce))
		g.Puts = append(g.Puts, k)
		size += keyCost(k) + len(v.nonce)
	}
	g.If = appendGuardCompares(slices.Grow(v.cmps[:0], len(v.order)+len(v.issued)), v)
	for _, k := range v.order {
		size += 2 * keyCost(k) // one compare and one Get per guarded key
		if !v.obs[k].Present {
			g.Absent = append(g.Absent, k)
		}
	}
	for _, f := range e.issuedFences(v) {
		g.If = append(g.If, ModRevisionBelow(f.key, f.readAt+1))
		size += keyCost(f.key)
	}
	// The View keeps the room for its next operation (View.reset clears it).
	v.then, v.puts, v.cmps = g.Then, g.Puts, g.If
	if err := e.limits.Check(op, TxnShape{Compares: len(g.If), Then: len(g.Then), Else: len(g.Read), Bytes: size}); err != nil {
		return Guarded{}, err
	}
	return g, nil
}

// keySet is a set of keys that scans an array while it is small (a commit
// writes a handful of keys), a map beyond.
type keySet struct {
	small [smallKeySet]string
	n     int
	large map[string]bool
}

// smallKeySet is the size up to which a keySet scans an array.
const smallKeySet = 16

func newKeySet(n int) keySet {
	if n > smallKeySet {
		return keySet{large: make(map[string]bool, n)}
	}
	return keySet{}
}

// has reports whether k is in the set.
func (s *keySet) has(k string) bool {
	if s.large != nil {
		return s.large[k]
	}
	return slices.Contains(s.small[:s.n], k)
}

// add adds k and reports whether it was new.
func (s *keySet) add(k string) bool {
	if s.large != nil {
		if s.large[k] {
			return false
		}
		s.large[k] = true
		return true
	}
	if slices.Contains(s.small[:s.n], k) {
		return false
	}
	s.small[s.n] = k
	s.n++
	return true
}

// deletedFences returns the delete fences of the keys the commit deletes.
func (e *Engine) deletedFences(c *Commit) []string {
	var fences []string
	for w := range c.allWrites() {
		if w.Delete {
			if f := e.deleteFence(w.Key); f != "" {
				fences = append(fences, f)
			}
		}
	}
	return fences
}

// fenceGuard asserts that a delete fence has not moved since readAt.
type fenceGuard struct {
	key    string
	readAt int64
}

// issuedFences returns the fence guards of the absences the view issued
// generations from: per fence, the earliest revision one of its keys was
// read absent at, in key order.
func (e *Engine) issuedFences(v *View) []fenceGuard {
	if len(v.issued) == 0 {
		return nil
	}
	earliest := map[string]int64{}
	for k, rev := range v.issued {
		f := e.deleteFence(k)
		if f == "" {
			continue
		}
		if r, ok := earliest[f]; !ok || rev < r {
			earliest[f] = rev
		}
	}
	out := make([]fenceGuard, 0, len(earliest))
	for _, f := range slices.Sorted(maps.Keys(earliest)) {
		out = append(out, fenceGuard{key: f, readAt: earliest[f]})
	}
	return out
}
