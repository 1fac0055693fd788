package memstore

import "github.com/zlink-systems/zlink-etcd/location"

// SetAuthorityCounters sets the last issued store version, object generation
// and owner generation (nil leaves a counter alone); the next issue is the
// value + 1, so location.MaxGeneration means exhausted. It is the
// conformance suite's SetAuthorityCounters hook. A negative value is an
// invalid argument and changes nothing.
func (s *Store) SetAuthorityCounters(version, object, owner *int64) error {
	for _, c := range []struct {
		name string
		v    *int64
	}{{"version", version}, {"object", object}, {"owner", owner}} {
		if c.v != nil && *c.v < 0 {
			return location.NewRangeError("authority.counter", "authority %s counter %d is negative", c.name, *c.v)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if version != nil {
		s.versionCounter = *version
	}
	if object != nil {
		s.objectCounter = *object
	}
	if owner != nil {
		s.ownerCounter = *owner
	}
	return nil
}
