package autoconnect

import "slices"

// targetMap is a map from target key to target that iterates in the order
// keys were first inserted; replacing a value keeps the key's position (the
// semantics of a JavaScript Map, on which connect order and event order
// depend). Not safe for concurrent use.
type targetMap struct {
	keys []string
	m    map[string]Target
}

// newTargetMap returns an empty map with room for size entries.
func newTargetMap(size int) *targetMap {
	return &targetMap{keys: make([]string, 0, size), m: make(map[string]Target, size)}
}

// set inserts or replaces t under t.Key.
func (tm *targetMap) set(t Target) {
	if _, ok := tm.m[t.Key]; !ok {
		tm.keys = append(tm.keys, t.Key)
	}
	tm.m[t.Key] = t
}

// get returns the target under key.
func (tm *targetMap) get(key string) (Target, bool) {
	t, ok := tm.m[key]
	return t, ok
}

// has reports whether key is present.
func (tm *targetMap) has(key string) bool {
	_, ok := tm.m[key]
	return ok
}

// remove deletes key; it reports whether it was present.
func (tm *targetMap) remove(key string) bool {
	if _, ok := tm.m[key]; !ok {
		return false
	}
	delete(tm.m, key)
	tm.keys = slices.DeleteFunc(tm.keys, func(k string) bool { return k == key })
	return true
}

// len returns the number of entries.
func (tm *targetMap) len() int { return len(tm.keys) }

// list returns the targets in insertion order (shallow copies).
func (tm *targetMap) list() []Target {
	out := make([]Target, 0, len(tm.keys))
	for _, k := range tm.keys {
		out = append(out, tm.m[k])
	}
	return out
}

// clear removes every entry.
func (tm *targetMap) clear() {
	tm.keys = nil
	tm.m = map[string]Target{}
}
