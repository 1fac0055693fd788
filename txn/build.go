package txn

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

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
	fences := e.issuedFences(v)
	// One room holds the bytes of every key of the transaction and of the
	// nonce, which every touched key's value shares.
	keyBytes := len(v.nonce)
	for _, ws := range [2][]Write{c.Writes, c.Unguarded} {
		for i := range ws {
			keyBytes += len(ws[i].Key)
		}
	}
	for _, k := range c.Touch {
		keyBytes += len(k)
	}
	for _, k := range v.order {
		keyBytes += len(k)
	}
	for _, f := range fences {
		keyBytes += len(f.key)
	}
	room := newOpRoom(e.protos, keyBytes, len(v.order)+len(fences))
	nonce := room.bytes(v.nonce)
	n := c.writeCount() + len(c.Touch)
	seen := newKeySet(n)
	g := Guarded{Read: v.order, Nonce: v.nonce, Before: v.obs,
		Then: slices.Grow(v.then[:0], n), Puts: slices.Grow(v.puts[:0], n)}
	size := 0
	for _, ws := range [2][]Write{c.Writes, c.Unguarded} {
		for i := range ws {
			w := &ws[i]
			if !seen.add(w.Key) {
				return Guarded{}, fmt.Errorf("%s: %w: key %q written twice in one commit", op, location.ErrInternal, w.Key)
			}
			if w.Delete {
				g.Then = append(g.Then, room.del(room.bytes(w.Key)))
				g.Deletes = append(g.Deletes, w.Key)
				size += keyCost(w.Key)
				continue
			}
			if !bytes.Contains(w.Value, nonce) {
				return Guarded{}, fmt.Errorf("%s: %w: the value of %q does not carry the write nonce", op, location.ErrInternal, w.Key)
			}
			g.Then = append(g.Then, room.put(room.bytes(w.Key), w.Value))
			g.Puts = append(g.Puts, w.Key)
			size += keyCost(w.Key) + len(w.Value)
		}
	}
	for _, k := range c.Touch {
		if !seen.add(k) {
			return Guarded{}, fmt.Errorf("%s: %w: key %q both written and touched", op, location.ErrInternal, k)
		}
		g.Then = append(g.Then, room.put(room.bytes(k), nonce))
		g.Puts = append(g.Puts, k)
		size += keyCost(k) + len(v.nonce)
	}
	g.If, g.elseOps, g.Absent = appendGuardOps(&room, v,
		slices.Grow(v.cmps[:0], len(v.order)+len(fences)), slices.Grow(v.gets[:0], len(v.order)), nil)
	for _, k := range v.order {
		size += 2 * keyCost(k) // one compare and one Get per guarded key
	}
	for _, f := range fences {
		g.If = append(g.If, room.compare(pb.Compare_MOD, pb.Compare_LESS, room.bytes(f.key), f.readAt+1))
		size += keyCost(f.key)
	}
	// The View keeps the room for its next operation (View.reset clears it).
	v.then, v.puts, v.cmps, v.gets = g.Then, g.Puts, g.If, g.elseOps
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
	for _, ws := range [2][]Write{c.Writes, c.Unguarded} {
		for i := range ws {
			if ws[i].Delete {
				if f := e.deleteFence(ws[i].Key); f != "" {
					fences = append(fences, f)
				}
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
