package etcdstore

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// A value the store writes is decoded again when a later decision reads it
// from the engine's cache (a steady-state renewal reads the row its previous
// renewal wrote). The commit can attach the value it encoded to what it
// wrote instead (txn.Write.Derived), so that nothing is decoded — but only
// when that value is exactly what decoding its JSON gives back. JSON loses a
// few distinctions: an empty slice or map under "omitempty" comes back nil,
// a string that is not valid UTF-8 comes back with replacement characters, a
// time comes back in UTC without its monotonic reading, an interface comes
// back as maps and float64s. jsonExact answers, per table, whether a value
// survives the round trip unchanged (reflect.DeepEqual), conservatively:
// whatever it does not know (custom marshalers, embedded structs, floats,
// interfaces holding something) counts as lossy, and such values are simply
// decoded again, as before. TestJSONExact checks its claims against
// encoding/json.

// exactCheck reports whether a value survives a JSON round trip unchanged.
type exactCheck func(v reflect.Value) bool

// jsonExact holds the exactness check of every table's value type.
type jsonExact map[rules.Table]typeCheck

// typeCheck is the exactness check of values of one type.
type typeCheck struct {
	typ   reflect.Type
	check exactCheck
}

// newJSONExact builds the checks of the registered tables.
func newJSONExact() jsonExact {
	out := jsonExact{}
	for _, spec := range rules.Tables() {
		out[spec.Name()] = typeCheck{typ: spec.Type(), check: exactCheckOf(spec.Type(), map[reflect.Type]bool{})}
	}
	return out
}

// survives reports whether value, a value of table t, is what decoding
// json.Marshal(value) into a fresh value of its type gives back (false for
// a value of another type).
func (x jsonExact) survives(t rules.Table, value any) bool {
	tc, ok := x[t]
	if !ok {
		return false
	}
	v := reflect.ValueOf(value)
	return v.IsValid() && v.Type() == tc.typ && tc.check(v)
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	routingIDType = reflect.TypeFor[location.RoutingID]()
)

// lossy is the check of a type whose round trip is not known to be exact.
func lossy(reflect.Value) bool { return false }

// customJSON reports whether t (or *t) has a JSON or text encoding of its
// own.
func customJSON(t reflect.Type) bool {
	for _, tt := range []reflect.Type{t, reflect.PointerTo(t)} {
		if tt.Implements(reflect.TypeFor[json.Marshaler]()) || tt.Implements(reflect.TypeFor[json.Unmarshaler]()) ||
			tt.Implements(reflect.TypeFor[encoding.TextMarshaler]()) || tt.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
			return true
		}
	}
	return false
}

// exactCheckOf builds the check of type t; building marks the types being
// built (a recursive type counts as lossy).
func exactCheckOf(t reflect.Type, building map[reflect.Type]bool) exactCheck {
	switch {
	case t == timeType:
		// A time comes back as the instant in UTC, without a monotonic
		// reading (RFC 3339 with nanoseconds); the year must be one
		// json.Marshal accepts.
		return func(v reflect.Value) bool {
			tm := v.Interface().(time.Time)
			return tm.Year() >= 0 && tm.Year() <= 9999 && tm == time.Unix(tm.Unix(), int64(tm.Nanosecond())).UTC()
		}
	case t == routingIDType:
		// Text ids as strings, other bytes as hex: every id comes back.
		return func(reflect.Value) bool { return true }
	case t.Kind() == reflect.Pointer:
		// nil is null and comes back nil; otherwise the element is encoded
		// (through its own methods, which the element's check judges).
	case customJSON(t):
		return lossy
	}
	if building[t] {
		return lossy
	}
	building[t] = true
	defer delete(building, t)
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(reflect.Value) bool { return true }
	case reflect.String:
		return func(v reflect.Value) bool { return utf8.ValidString(v.String()) }
	case reflect.Pointer:
		elem := exactCheckOf(t.Elem(), building)
		return func(v reflect.Value) bool {
			if v.IsNil() {
				return true
			}
			// A pointer to something that encodes as null comes back nil.
			return !encodesNull(v.Elem()) && elem(v.Elem())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !customJSON(t.Elem()) {
			// Base64; nil is null, empty is "" and comes back empty.
			return func(reflect.Value) bool { return true }
		}
		elem := exactCheckOf(t.Elem(), building)
		return func(v reflect.Value) bool {
			for i := range v.Len() {
				if !elem(v.Index(i)) {
					return false
				}
			}
			return true
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || customJSON(t.Key()) {
			return lossy
		}
		elem := exactCheckOf(t.Elem(), building)
		return func(v reflect.Value) bool {
			it := v.MapRange()
			for it.Next() {
				if !utf8.ValidString(it.Key().String()) || !elem(it.Value()) {
					return false
				}
			}
			return true
		}
	case reflect.Struct:
		return structCheck(t, building)
	case reflect.Interface:
		return func(v reflect.Value) bool { return v.IsNil() }
	}
	return lossy
}

// encodesNull reports whether v encodes as JSON null.
func encodesNull(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return v.IsNil()
	}
	return false
}

// fieldCheck is the check of one struct field.
type fieldCheck struct {
	// index is the field's index sequence (through embedded structs).
	index []int
	// skipped: the field is not encoded, so it comes back zero.
	skipped bool
	// omitEmpty: an empty value is left out, so it comes back zero.
	omitEmpty bool
	check     exactCheck
}

// structCheck builds the check of a struct type: every field must come
// back, an encoded one through its own check, a left-out one by being zero.
func structCheck(t reflect.Type, building map[reflect.Type]bool) exactCheck {
	var (
		fields []fieldCheck
		names  []string
	)
	if !collectFields(t, nil, building, &fields, &names) {
		return lossy
	}
	return func(v reflect.Value) bool {
		for _, fc := range fields {
			f := v.FieldByIndex(fc.index)
			switch {
			case fc.skipped:
				if !f.IsZero() {
					return false
				}
			case fc.omitEmpty && isEmptyJSON(f):
				if !f.IsZero() {
					return false // an empty, non-nil slice or map comes back nil
				}
			case !fc.check(f):
				return false
			}
		}
		return true
	}
}

// collectFields adds the fields of struct type t (at index path) to fields
// and their JSON names to names, promoting the fields of an embedded struct
// without a JSON name as encoding/json does. It reports false for what it
// does not model: embedded pointers and non-structs, tag options other than
// omitempty, and JSON names that equal others without case (encoding/json
// would pick one by depth and tags; decoding matches names without case).
func collectFields(t reflect.Type, path []int, building map[reflect.Type]bool, fields *[]fieldCheck, names *[]string) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(path[:len(path):len(path)], i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			*fields = append(*fields, fieldCheck{index: index, skipped: true})
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct || customJSON(f.Type) {
				return false
			}
			if !collectFields(f.Type, index, building, fields, names) {
				return false
			}
			continue
		}
		if !f.IsExported() {
			*fields = append(*fields, fieldCheck{index: index, skipped: true})
			continue
		}
		if name == "" {
			name = f.Name
		}
		fc := fieldCheck{index: index, check: exactCheckOf(f.Type, building)}
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "":
			case "omitempty":
				fc.omitEmpty = true
			default:
				return false // "string", "omitzero", …
			}
		}
		for _, other := range *names {
			if strings.EqualFold(other, name) {
				return false
			}
		}
		*names = append(*names, name)
		*fields = append(*fields, fc)
	}
	return true
}

// isEmptyJSON reports whether "omitempty" leaves v out (encoding/json's
// notion of empty).
func isEmptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return v.IsZero()
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
