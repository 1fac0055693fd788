package etcdstore

import (
	"encoding/base64"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// The values the steady-state writes store (spots, actors, peers, mesh-node
// descriptors, authority records) are encoded here by hand instead of by
// encoding/json's reflection, which costs several times more. The bytes are
// exactly json.Marshal's: TestRowJSON compares them on values with every
// field set and on random ones, and the golden files pin them. A type
// added to a row must be added here too (TestRowJSON fails until it is).

// appendRowJSON appends json.Marshal(value) to dst for the row types
// encoded by hand; ok is false for other values, and for values
// json.Marshal refuses (a time outside RFC 3339), which the caller then
// gives to json.Marshal. exact reports whether decoding the JSON gives value
// back unchanged (what jsonExact answers, found while encoding: no invalid
// UTF-8, no time outside UTC or with a monotonic reading, no empty
// collection left out by omitempty).
func appendRowJSON(dst []byte, value any) (out []byte, ok, exact bool) {
	var w rowWriter
	w.b = dst
	switch v := value.(type) {
	case location.SpotLocation:
		w.spot(&v)
	case location.ActorLocation:
		w.actor(&v)
	case location.PeerLocation:
		w.peer(&v)
	case location.MeshNodeDescriptor:
		w.meshNode(&v)
	case rules.AuthorityRow:
		return appendAuthorityJSON(dst, &v)
	default:
		return dst, false, false
	}
	return w.done(dst)
}

// appendAuthorityJSON is appendRowJSON of an authority row.
func appendAuthorityJSON(dst []byte, r *rules.AuthorityRow) (out []byte, ok, exact bool) {
	w := rowWriter{b: dst}
	w.authority(r)
	return w.done(dst)
}

// rowWriter appends JSON to b as encoding/json writes it (HTML-escaped
// strings, fields in declaration order, map keys sorted).
type rowWriter struct {
	b []byte
	// refused: a value json.Marshal would refuse was met.
	refused bool
	// lossy: a value decoding would not give back was met.
	lossy bool
}

// done returns what appendRowJSON returns once the row is written: the
// JSON, or dst as it was when the row was refused.
func (w *rowWriter) done(dst []byte) (out []byte, ok, exact bool) {
	if w.refused {
		return dst, false, false
	}
	return w.b, true, !w.lossy
}

// raw appends literal JSON (punctuation and field names).
func (w *rowWriter) raw(s string) { w.b = append(w.b, s...) }

// int appends n in decimal; the small numbers most fields hold (counts,
// limits, generations) without strconv's general loop.
func (w *rowWriter) int(n int64) {
	switch {
	case 0 <= n && n < 10:
		w.b = append(w.b, byte('0'+n))
	case 10 <= n && n < 100:
		w.b = append(w.b, byte('0'+n/10), byte('0'+n%10))
	case 100 <= n && n < 1000:
		w.b = append(w.b, byte('0'+n/100), byte('0'+n/10%10), byte('0'+n%10))
	default:
		w.b = strconv.AppendInt(w.b, n, 10)
	}
}

func (w *rowWriter) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

// str appends s as a JSON string, as encoding/json does: '"', '\\' and
// control characters escaped (\b, \f, \n, \r, \t by name), '<', '>', '&',
// U+2028 and U+2029 as \u escapes, invalid UTF-8 as U+FFFD.
func (w *rowWriter) str(s string) {
	const hex = "0123456789abcdef"
	b := append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.lossy = true // comes back as U+FFFD
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
}

// jsonSafe[c] reports whether encoding/json writes the ASCII byte c of a
// string as it is: printable, and neither '"', '\\' nor one of the HTML
// characters '<', '>', '&' it escapes.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := range byte(utf8.RuneSelf) {
		safe[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return safe
}()

// rid appends a routing id as location.RoutingID.MarshalJSON writes it.
func (w *rowWriter) rid(r location.RoutingID) {
	if utf8.ValidString(string(r)) {
		w.str(string(r))
		return
	}
	w.raw(`{"hex":`)
	w.str(r.Hex())
	w.raw("}")
}

// bytes appends base64 of p, or null for nil.
func (w *rowWriter) bytes(p []byte) {
	if p == nil {
		w.raw("null")
		return
	}
	w.b = append(w.b, '"')
	w.b = base64.StdEncoding.AppendEncode(w.b, p)
	w.b = append(w.b, '"')
}

// time appends t as time.Time.MarshalJSON writes it (RFC 3339 with
// nanoseconds), or marks the value refused where MarshalJSON fails.
func (w *rowWriter) time(t time.Time) {
	if t != time.Unix(t.Unix(), int64(t.Nanosecond())).UTC() {
		w.lossy = true // comes back in UTC, without a monotonic reading
	}
	w.b = append(w.b, '"')
	n0 := len(w.b)
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	b := w.b
	switch {
	case b[n0+len("9999")] != '-': // a year outside [0,9999]
		w.refused = true
	case b[len(b)-1] != 'Z':
		c := b[len(b)-len("Z07:00")]
		if '0' <= c && c <= '9' || 10*(b[len(b)-5]-'0')+(b[len(b)-4]-'0') >= 24 {
			w.refused = true // a zone offset of a day or more
		}
	}
	w.b = append(w.b, '"')
}

// strings appends a slice of strings, or null for nil.
func (w *rowWriter) strings(ss []string) {
	if ss == nil {
		w.raw("null")
		return
	}
	w.raw("[")
	for i, s := range ss {
		if i > 0 {
			w.raw(",")
		}
		w.str(s)
	}
	w.raw("]")
}

// mapOf appends a map with string keys, in key order, or null for nil.
func mapOf[V any](w *rowWriter, m map[string]V, value func(V)) {
	if m == nil {
		w.raw("null")
		return
	}
	w.raw("{")
	var buf [8]string // room for the keys of most maps
	sorted := buf[:0]
	for k := range m {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for i, k := range sorted {
		if i > 0 {
			w.raw(",")
		}
		w.str(k)
		w.raw(":")
		value(m[k])
	}
	w.raw("}")
}

func (w *rowWriter) owner(t location.OwnerToken) {
	w.raw(`{"ownerId":`)
	w.str(t.OwnerID)
	w.raw(`,"leaseGeneration":`)
	w.int(t.LeaseGeneration)
	w.raw("}")
}

func (w *rowWriter) spot(s *location.SpotLocation) {
	w.raw(`{"meshName":`)
	w.str(s.MeshName)
	w.raw(`,"spotId":`)
	w.str(s.SpotID)
	w.raw(`,"spotGeneration":`)
	w.int(s.SpotGeneration)
	w.raw(`,"spotType":`)
	w.str(s.SpotType)
	w.raw(`,"ownerNodeRid":`)
	w.rid(s.OwnerNodeRID)
	w.raw(`,"ownerNodeGeneration":`)
	w.int(s.OwnerNodeGeneration)
	w.raw(`,"spotKind":`)
	w.str(string(s.SpotKind))
	w.raw(`,"ownerId":`)
	w.str(s.OwnerID)
	w.raw(`,"leaseGeneration":`)
	w.int(s.LeaseGeneration)
	w.raw(`,"updatedAt":`)
	w.time(s.UpdatedAt)
	w.raw("}")
}

func (w *rowWriter) actor(a *location.ActorLocation) {
	w.raw(`{"meshName":`)
	w.str(a.MeshName)
	w.raw(`,"actorId":`)
	w.str(a.ActorID)
	w.raw(`,"actorType":`)
	w.str(a.ActorType)
	w.raw(`,"actorRef":{"actorId":`)
	w.str(a.ActorRef.ActorID)
	w.raw(`,"objectGeneration":`)
	w.int(a.ActorRef.ObjectGeneration)
	w.raw(`,"meshName":`)
	w.str(a.ActorRef.MeshName)
	w.raw(`,"nodeRid":`)
	w.rid(a.ActorRef.NodeRID)
	w.raw(`},"ownerNodeRid":`)
	w.rid(a.OwnerNodeRID)
	w.raw(`,"ownerNodeGeneration":`)
	w.int(a.OwnerNodeGeneration)
	w.raw(`,"spotKind":`)
	w.str(string(a.SpotKind))
	w.raw(`,"spotId":`)
	w.str(a.SpotID)
	w.raw(`,"spotGeneration":`)
	w.int(a.SpotGeneration)
	w.raw(`,"membershipEpoch":`)
	w.int(a.MembershipEpoch)
	w.raw(`,"ownerId":`)
	w.str(a.OwnerID)
	w.raw(`,"leaseGeneration":`)
	w.int(a.LeaseGeneration)
	w.raw(`,"updatedAt":`)
	w.time(a.UpdatedAt)
	w.raw("}")
}

func (w *rowWriter) peer(p *location.PeerLocation) {
	w.raw(`{"autoConnectType":`)
	w.int(int64(p.AutoConnectType))
	w.raw(`,"meshName":`)
	w.str(p.MeshName)
	if p.NodeRID != nil {
		w.raw(`,"nodeRid":`)
		w.rid(*p.NodeRID)
	}
	w.raw(`,"role":`)
	w.int(int64(p.Role))
	w.raw(`,"endpoint":`)
	w.str(p.Endpoint)
	w.raw(`,"weight":`)
	w.int(p.Weight)
	w.raw(`,"draining":`)
	w.bool(p.Draining)
	w.raw(`,"value":`)
	w.int(p.Value)
	if len(p.Metadata) > 0 {
		w.raw(`,"metadata":`)
		mapOf(w, p.Metadata, w.str)
	} else if p.Metadata != nil {
		w.lossy = true // left out, comes back nil
	}
	if len(p.Capabilities) > 0 {
		w.raw(`,"capabilities":`)
		w.strings(p.Capabilities)
	} else if p.Capabilities != nil {
		w.lossy = true
	}
	w.raw(`,"ownerId":`)
	w.str(p.OwnerID)
	w.raw(`,"generation":`)
	w.int(p.Generation)
	w.raw(`,"updatedAt":`)
	w.time(p.UpdatedAt)
	w.raw("}")
}

func (w *rowWriter) capacity(c location.PopulationCapacity) {
	w.raw(`{"active":`)
	w.int(c.Active)
	w.raw(`,"reserved":`)
	w.int(c.Reserved)
	w.raw(`,"limit":`)
	w.int(c.Limit)
	w.raw("}")
}

func (w *rowWriter) meshNode(d *location.MeshNodeDescriptor) {
	w.raw(`{"meshName":`)
	w.str(d.MeshName)
	w.raw(`,"rid":`)
	w.rid(d.RID)
	w.raw(`,"lifecycleGeneration":`)
	w.int(d.LifecycleGeneration)
	w.raw(`,"descriptorRevision":`)
	w.int(d.DescriptorRevision)
	w.raw(`,"endpoint":`)
	w.str(d.Endpoint)
	w.raw(`,"objectRole":`)
	w.str(string(d.ObjectRole))
	if d.EntrySpotID != nil {
		w.raw(`,"entrySpotId":`)
		w.str(*d.EntrySpotID)
	}
	w.raw(`,"placementWeight":`)
	w.int(d.PlacementWeight)
	w.raw(`,"populationCapacity":{"actors":`)
	w.capacity(d.PopulationCapacity.Actors)
	w.raw(`,"spots":`)
	w.capacity(d.PopulationCapacity.Spots)
	w.raw(`,"spotTypes":`)
	if d.PopulationCapacity.SpotTypes == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i, st := range d.PopulationCapacity.SpotTypes {
			if i > 0 {
				w.raw(",")
			}
			w.raw(`{"objectKind":`)
			w.str(string(st.ObjectKind))
			w.raw(`,"stableType":`)
			w.str(st.StableType)
			w.raw(`,"active":`)
			w.int(st.Active)
			w.raw(`,"reserved":`)
			w.int(st.Reserved)
			w.raw(`,"limit":`)
			w.int(st.Limit)
			w.raw("}")
		}
		w.raw("]")
	}
	w.raw(`},"activationConcurrency":{"active":`)
	w.int(d.ActivationConcurrency.Active)
	w.raw(`,"limit":`)
	w.int(d.ActivationConcurrency.Limit)
	w.raw(`},"channelWeights":`)
	mapOf(w, d.ChannelWeights, w.int)
	w.raw(`,"applicationVersion":`)
	w.int(d.ApplicationVersion)
	w.raw(`,"spotTypes":`)
	w.strings(d.SpotTypes)
	w.raw(`,"objectCapabilities":`)
	if d.ObjectCapabilities == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i, c := range d.ObjectCapabilities {
			if i > 0 {
				w.raw(",")
			}
			w.raw(`{"objectKind":`)
			w.str(string(c.ObjectKind))
			w.raw(`,"stableType":`)
			w.str(c.StableType)
			w.raw(`,"policy":`)
			w.str(string(c.Policy))
			w.raw(`,"hasSnapshotAdapter":`)
			w.bool(c.HasSnapshotAdapter)
			w.raw(`,"limit":`)
			w.int(c.Limit)
			w.raw("}")
		}
		w.raw("]")
	}
	if d.MaintenanceWave != nil {
		w.raw(`,"maintenanceWave":`)
		w.str(*d.MaintenanceWave)
	}
	w.raw(`,"state":`)
	w.int(int64(d.State))
	w.raw(`,"securityIdentity":`)
	w.str(d.SecurityIdentity)
	w.raw(`,"ownerId":`)
	w.str(d.OwnerID)
	w.raw(`,"leaseGeneration":`)
	w.int(d.LeaseGeneration)
	w.raw(`,"updatedAt":`)
	w.time(d.UpdatedAt)
	w.raw("}")
}

func (w *rowWriter) authority(r *rules.AuthorityRow) {
	w.raw("{")
	if r.StoreVersion != "" {
		w.raw(`"storeVersion":`)
		w.str(string(r.StoreVersion))
		w.raw(",")
	}
	w.raw(`"payload":`)
	w.bytes(r.Payload)
	w.raw(`,"objectGeneration":`)
	w.int(r.ObjectGeneration)
	w.raw(`,"authorityOwnerGeneration":`)
	w.int(r.AuthorityOwnerGeneration)
	w.raw(`,"owner":`)
	w.owner(r.Owner)
	a := &r.Allocation
	w.raw(`,"allocation":{"state":`)
	w.str(string(a.State))
	w.raw(`,"objectKind":`)
	w.str(string(a.ObjectKind))
	w.raw(`,"stableType":`)
	w.str(a.StableType)
	w.raw(`,"descriptor":{"meshName":`)
	w.str(a.Descriptor.MeshName)
	w.raw(`,"rid":`)
	w.rid(a.Descriptor.RID)
	w.raw(`},"descriptorLifecycleGeneration":`)
	w.int(a.DescriptorLifecycleGeneration)
	w.raw(`,"capacity":{"actors":`)
	w.int(a.Capacity.Actors)
	w.raw(`,"spots":`)
	w.int(a.Capacity.Spots)
	if st := a.Capacity.SpotType; st != nil {
		w.raw(`,"spotType":{"objectKind":`)
		w.str(string(st.ObjectKind))
		w.raw(`,"stableType":`)
		w.str(st.StableType)
		w.raw(`,"count":`)
		w.int(st.Count)
		w.raw("}")
	}
	w.raw("}}")
	if p := r.PendingCreation; p != nil {
		w.raw(`,"pendingCreation":{"reservationId":`)
		w.str(p.ReservationID)
		w.raw(`,"requestContentReference":`)
		w.str(p.RequestContentReference)
		w.raw(`,"requestSha256":`)
		w.bytes(p.RequestSHA256)
		w.raw(`,"requestEncodedSize":`)
		w.int(p.RequestEncodedSize)
		w.raw("}")
	}
	if c := r.Creation; c != nil {
		w.raw(`,"creation":{"reservationId":`)
		w.str(c.ReservationID)
		w.raw(`,"target":{"meshName":`)
		w.str(c.Target.MeshName)
		w.raw(`,"nodeRid":`)
		w.rid(c.Target.NodeRID)
		w.raw(`,"nodeLifecycleGeneration":`)
		w.int(c.Target.NodeLifecycleGeneration)
		w.raw(`,"owner":`)
		w.owner(c.Target.Owner)
		w.raw("}")
		if c.Terminal != "" {
			w.raw(`,"terminal":`)
			w.str(c.Terminal)
		}
		w.raw("}")
	}
	w.raw("}")
}
