// Package filled builds values of any type with every exported field set,
// for tests that must see every field of a type: a copy that shares no
// memory, a codec that round-trips, a golden encoding that changes when a
// field is added. The values are deterministic.
package filled

import (
	"reflect"
	"time"
)

// Time is the time every time.Time field is set to.
var Time = time.UnixMilli(1_782_950_400_000).UTC()

// Value returns a value of typ whose exported fields are all set, through
// pointers, slices (one element), maps (one entry) and nested structs, to
// "x", 1, true, Time, or (for an interface) the string "x"; nesting deeper
// than eight levels stays zero.
func Value(typ reflect.Type) any {
	v := reflect.New(typ).Elem()
	fill(v, 0)
	return v.Interface()
}

func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(Time))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	}
}
