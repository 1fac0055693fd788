package etcdstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Values are stored as JSON envelopes (docs/key-layout.md):
//
//	{"format":"zlink.<table>/v1","generation":7,"writtenAtMs":1782950400000,
//	 "nonce":"…","value":{…the row…}}
//
// format names the table and the encoding version; generation is the row
// generation (0 for tables without one); writtenAtMs is the store clock when
// the value was written (for the garbage collector's age rules); nonce is the
// write nonce of the transaction (decision E-9). The value is the row as its
// Go type marshals it.

// formatPrefix and formatVersion are what every format tag starts and ends
// with (the latter is the value encoding version).
const (
	formatPrefix  = "zlink."
	formatVersion = "/v1"
)

// envelope is a stored value.
type envelope struct {
	Format      string          `json:"format"`
	Generation  int64           `json:"generation,omitempty"`
	WrittenAtMs int64           `json:"writtenAtMs"`
	Nonce       string          `json:"nonce"`
	Value       json.RawMessage `json:"value"`
}

// formatOf returns the format tag of a table's values.
func formatOf(t rules.Table) string { return formatPrefix + string(t) + formatVersion }

// encodeValue encodes one table value. The authority row's StoreVersion is
// not stored: it is the key's ModRevision (decision E-4).
func encodeValue(t rules.Table, value any, generation int64, nonce string, now time.Time) ([]byte, error) {
	b, _, err := appendValue(nil, t, value, generation, nonce, now)
	return b, err
}

// roundTrip says whether decoding a value's JSON gives the value back
// unchanged (jsonExact), as far as its encoding found out.
type roundTrip uint8

const (
	roundTripUnknown roundTrip = iota // encoded by encoding/json
	roundTripExact
	roundTripLossy
)

// appendValue appends the encoding of one table value (encodeValue) to dst,
// and says whether decoding it gives the value back.
func appendValue(dst []byte, t rules.Table, value any, generation int64, nonce string, now time.Time) ([]byte, roundTrip, error) {
	head := appendEnvelopeHead(dst, t, generation, now.UnixMilli(), nonce)
	var (
		b         []byte
		ok, exact bool
	)
	if row, isRow := value.(rules.AuthorityRow); isRow {
		row.StoreVersion = ""
		// The row is encoded from here (not boxed again: appendRowJSON
		// would encode the same bytes), unless json.Marshal must.
		if b, ok, exact = appendAuthorityJSON(head, &row); !ok {
			value = row
		}
	} else {
		b, ok, exact = appendRowJSON(head, value)
	}
	if ok {
		rt := roundTripLossy
		if exact {
			rt = roundTripExact
		}
		return append(b, '}'), rt, nil
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, roundTripUnknown, fmt.Errorf("%w: encode %s value: %w", location.ErrInternal, t, err)
	}
	return append(append(head, raw...), '}'), roundTripUnknown, nil
}

// encoder encodes the values a store writes (encodeValue) in scratch
// buffers it reuses, so that each value costs one allocation of its exact
// size.
type encoder struct {
	scratch sync.Pool // of *[]byte
}

// maxScratch is the largest scratch buffer an encoder keeps.
const maxScratch = 64 << 10

// sizeSlack is what encode adds to a size hint: a rewritten value may be a
// few bytes longer than the one it replaces (a timestamp's fraction).
const sizeSlack = 16

// encodeSized is encode with the value's expected size, when positive
// (the length of the value the key holds): the value is encoded straight
// into a buffer of that size and a little more, and copied to one of its
// exact size only when it did not fit.
func (e *encoder) encodeSized(t rules.Table, value any, generation int64, nonce string, now time.Time, sizeHint int) ([]byte, roundTrip, error) {
	if sizeHint <= 0 {
		return e.encode(t, value, generation, nonce, now)
	}
	size := sizeHint + sizeSlack
	b, rt, err := appendValue(make([]byte, 0, size), t, value, generation, nonce, now)
	if err != nil {
		return nil, rt, err
	}
	if cap(b) != size {
		b = bytes.Clone(b)
	}
	return b, rt, nil
}

// encode is appendValue to a buffer of its own.
func (e *encoder) encode(t rules.Table, value any, generation int64, nonce string, now time.Time) ([]byte, roundTrip, error) {
	p, _ := e.scratch.Get().(*[]byte)
	if p == nil {
		p = new([]byte)
	}
	b, rt, err := appendValue((*p)[:0], t, value, generation, nonce, now)
	if err != nil {
		return nil, rt, err
	}
	out := bytes.Clone(b)
	if cap(b) <= maxScratch {
		*p = b[:0]
		e.scratch.Put(p)
	}
	return out, rt, nil
}

// appendEnvelope appends the JSON of envelope{formatOf(t), generation,
// writtenAtMs, nonce, raw} to dst: the bytes json.Marshal writes for it
// (TestEnvelopeBytes), without going over the value a second time (raw is
// json.Marshal's output, compact and escaped already).
func appendEnvelope(dst []byte, t rules.Table, generation, writtenAtMs int64, nonce string, raw []byte) []byte {
	dst = appendEnvelopeHead(dst, t, generation, writtenAtMs, nonce)
	dst = append(dst, raw...)
	return append(dst, '}')
}

// appendEnvelopeHead appends an envelope up to its value: everything but
// the value's JSON and the closing brace.
func appendEnvelopeHead(dst []byte, t rules.Table, generation, writtenAtMs int64, nonce string) []byte {
	dst = append(dst, `{"format":`...)
	dst = appendJSONString(dst, formatPrefix, string(t), formatVersion)
	if generation != 0 {
		dst = append(dst, `,"generation":`...)
		dst = strconv.AppendInt(dst, generation, 10)
	}
	dst = append(dst, `,"writtenAtMs":`...)
	dst = strconv.AppendInt(dst, writtenAtMs, 10)
	dst = append(dst, `,"nonce":`...)
	dst = appendJSONString(dst, nonce)
	return append(dst, `,"value":`...)
}

// appendJSONString appends the concatenation of parts as json.Marshal
// writes a string: quoted as it is when every byte is printable ASCII that
// needs no escape (table names and nonces are), through json.Marshal
// otherwise.
func appendJSONString(dst []byte, parts ...string) []byte {
	for _, s := range parts {
		for i := range len(s) {
			if c := s[i]; c >= utf8.RuneSelf || !jsonSafe[c] || c == 0x7f {
				b, _ := json.Marshal(strings.Join(parts, "")) // a string always encodes
				return append(dst, b...)
			}
		}
	}
	dst = append(dst, '"')
	for _, s := range parts {
		dst = append(dst, s...)
	}
	return append(dst, '"')
}

// decodeRecord decodes an observed value of table t into the record the
// rules expect. The record is the caller's own: values memoized on the
// observation (sharedRecord) are copied out with the table's deep copy
// (rules.TableSpec.Clone), which costs a few allocations where decoding the
// JSON again costs microseconds.
func decodeRecord(t rules.Table, o txn.Observation) (rules.Record, error) {
	rec, shared, err := sharedRecord(t, o)
	if err != nil || !shared {
		return rec, err
	}
	spec, _ := rules.Lookup(t) // sharedRecord only shares values of known tables
	rec.Value = spec.Clone(rec.Value)
	return rec, nil
}

// decodedRecord is the decoded form of one observed value, memoized on the
// observation (txn.Observation.SetDerived).
type decodedRecord struct {
	table rules.Table
	rec   rules.Record
}

// authorityForm is the decoded form of an authority row being written: its
// StoreVersion is the commit's revision (decodeFresh reads it from the
// ModRevision), known once the commit applies. row is the rules.AuthorityRow
// as the plan boxed it (its StoreVersion aside), so that the form does not
// copy the row again until it is derived.
type authorityForm struct {
	row        any
	generation int64
}

// DeriveAt implements txn.DerivedAt.
func (f authorityForm) DeriveAt(revision int64) any {
	row := f.row.(rules.AuthorityRow) // decodedForm boxes only these
	row.StoreVersion = versionOf(revision)
	return decodedRecord{table: rules.TableAuthority, rec: rules.Record{Value: row, Generation: f.generation}}
}

// decodedForm returns what a reader would decode from the value of w, which
// the store is about to write, for txn.Write.Derived: a decodedRecord, or an
// authorityForm; nil when decoding the written JSON might not give exactly
// that value back, so that readers decode it. rt is what encoding the value
// found out about that (unknown: jsonExact answers). The form holds a copy
// of the value, which the decision may keep, unless the plan owns it
// (rules.Write.Owned): then the value itself.
func (s *Store) decodedForm(w rules.Write, rt roundTrip) any {
	t, value, generation := w.Table, w.Value, w.Generation
	spec, ok := rules.Lookup(t)
	if !ok || !spec.Holds(value) || rt == roundTripLossy {
		return nil
	}
	if row, ok := value.(rules.AuthorityRow); ok {
		row.StoreVersion = "" // not stored (encodeValue)
		if rt == roundTripUnknown && !s.exact.survives(t, row) {
			return nil
		}
		if !w.Owned {
			value = row.Clone()
		}
		return authorityForm{row: value, generation: generation}
	}
	if rt == roundTripUnknown && !s.exact.survives(t, value) {
		return nil
	}
	if !w.Owned {
		value = spec.Clone(value)
	}
	return decodedRecord{table: t, rec: rules.Record{Value: value, Generation: generation}}
}

// sharedRecord returns the decoded record of an observed value. When the
// observation came from the engine (a read or a write of it), the record is
// decoded once per observed value and shared by every later call on a copy
// of the same observation: shared is then true, and the caller must not modify the record
// (decodeRecord copies it; readers that only look, such as the owner index,
// use it directly). Otherwise the record is the caller's own.
func sharedRecord(t rules.Table, o txn.Observation) (rec rules.Record, shared bool, err error) {
	if d, ok := o.Derived(); ok {
		if m, ok := d.(decodedRecord); ok && m.table == t {
			return m.rec, true, nil
		}
	}
	rec, err = decodeFresh(t, o)
	if err != nil {
		return rules.Record{}, false, err
	}
	if o.SetDerived(decodedRecord{table: t, rec: rec}) {
		return rec, true, nil
	}
	return rec, false, nil
}

// decodeFresh decodes an observed value of table t: the envelope and the
// value in one pass, or, when that fails or the format does not match, in
// two (which names the problem precisely).
func decodeFresh(t rules.Table, o txn.Observation) (rules.Record, error) {
	spec, ok := rules.Lookup(t)
	if !ok {
		return rules.Record{}, fmt.Errorf("%w: value at %q: unknown table %q", location.ErrInternal, o.Key, t)
	}
	v, format, generation, ok := decodeEnvelope(spec, o.Value)
	if !ok || format != formatOf(t) {
		var env envelope
		if err := json.Unmarshal(o.Value, &env); err != nil {
			return rules.Record{}, fmt.Errorf("%w: undecodable value at %q: %w", location.ErrInternal, o.Key, err)
		}
		if env.Format != formatOf(t) {
			return rules.Record{}, fmt.Errorf("%w: value at %q has format %q, want %q", location.ErrInternal, o.Key, env.Format, formatOf(t))
		}
		var err error
		if v, err = spec.DecodeJSON(env.Value); err != nil {
			return rules.Record{}, fmt.Errorf("%w: value at %q: %w", location.ErrInternal, o.Key, err)
		}
		generation = env.Generation
	}
	if row, ok := v.(rules.AuthorityRow); ok {
		row.StoreVersion = versionOf(o.ModRevision)
		v = row
	}
	return rules.Record{Value: v, Generation: generation}, nil
}

// writtenAt returns the time an observed value was written.
func writtenAt(o txn.Observation) (time.Time, error) {
	var env struct {
		WrittenAtMs int64 `json:"writtenAtMs"`
	}
	if err := json.Unmarshal(o.Value, &env); err != nil {
		return time.Time{}, fmt.Errorf("%w: undecodable value at %q: %w", location.ErrInternal, o.Key, err)
	}
	return time.UnixMilli(env.WrittenAtMs).UTC(), nil
}

// versionOf is the store version of a record whose ModRevision is rev.
func versionOf(rev int64) location.StoreVersion {
	return location.StoreVersion(strconv.FormatInt(rev, 10))
}

// decodeEnvelope decodes a whole stored value of the table in one pass, the
// value straight into its Go type (rules.ValueSlot); ok is false when it
// cannot, or when the value is missing or null (the two-pass decoding then
// reports why).
func decodeEnvelope(spec *rules.TableSpec, data []byte) (v any, format string, generation int64, ok bool) {
	slot := spec.NewValueSlot()
	env := struct {
		Format     string `json:"format"`
		Generation int64  `json:"generation,omitempty"`
		Value      any    `json:"value"`
	}{Value: slot.Target()}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, "", 0, false
	}
	if v, ok = slot.Value(); !ok {
		return nil, "", 0, false
	}
	return v, env.Format, env.Generation, true
}

// indexValue is the value of an owner-index entry: the nonce alone.
func indexValue(nonce string) []byte {
	return []byte(`{"format":"zlink.ownerIndex/v1","nonce":"` + nonce + `"}`)
}
