// Package reflectfill fills values by reflection for tests that must cover
// every field of a type, a field added later included, without naming
// them (the clone and copy tests of location and rules).
package reflectfill

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// Fill sets every settable field reachable from v to a distinct non-zero
// value derived from *seed (which it advances): strings "s<n>", numbers n,
// booleans true, times n seconds after the epoch (UTC); slices get two
// elements, maps two entries, pointers a target. With empty set, slices
// and maps are made empty but not nil, and pointers stay nil. A kind it
// cannot fill (a channel, a function, an interface) fails tb.
func Fill(tb testing.TB, v reflect.Value, seed *int, empty bool) {
	tb.Helper()
	*seed++
	n := *seed
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		size := 2
		if empty {
			size = 0
		}
		s := reflect.MakeSlice(v.Type(), size, size)
		for i := range size {
			Fill(tb, s.Index(i), seed, empty)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; !empty && i < 2; i++ {
			k := reflect.New(v.Type().Key()).Elem()
			Fill(tb, k, seed, empty)
			e := reflect.New(v.Type().Elem()).Elem()
			Fill(tb, e, seed, empty)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		if empty {
			return
		}
		p := reflect.New(v.Type().Elem())
		Fill(tb, p.Elem(), seed, empty)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.UnixMilli(int64(n) * 1000).UTC()))
			return
		}
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				Fill(tb, v.Field(i), seed, empty)
			}
		}
	default:
		tb.Fatalf("reflectfill: cannot fill a %s", v.Kind())
	}
}
