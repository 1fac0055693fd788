package rules

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/reflectfill"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestCopyOverCur proves the copies a write stores (meshNodeCopy,
// peerCopy): with every field set by reflection (a field added later is
// covered), each copy equals the caller's row, keeps its nil and empty
// slices and maps apart as Clone does, and shares no memory with it,
// whatever the stored row it may share parts with: none, an equal one, a
// different one, or one whose slices and maps are nil or empty where the
// caller's are not.
func TestCopyOverCur(t *testing.T) {
	t.Run("MeshNodeDescriptor", func(t *testing.T) { copyOverCases(t, meshNodeCopy) })
	t.Run("PeerLocation", func(t *testing.T) { copyOverCases(t, peerCopy) })
}

func copyOverCases[T location.Cloner[T]](t *testing.T, copyOver func(r, cur *T) T) {
	filled := func(seed int, empty bool) T {
		var v T
		reflectfill.Fill(t, reflect.ValueOf(&v).Elem(), &seed, empty)
		return v
	}
	rows := map[string]T{"full": filled(0, false), "empty": filled(0, true), "zero": *new(T)}
	for rowName, row := range rows {
		curs := map[string]*T{"none": nil}
		for curName, cur := range map[string]T{
			"equal": row.Clone(), "other": filled(1000, false), "empty": filled(0, true),
			"full": filled(0, false), "zero": *new(T),
		} {
			curs[curName] = &cur
		}
		for curName, cur := range curs {
			t.Run(rowName+"/cur-"+curName, func(t *testing.T) {
				r := row.Clone()
				var before T
				if cur != nil {
					before = (*cur).Clone()
				}
				got := copyOver(&r, cur)
				require.Equal(t, r.Clone(), got)
				require.Empty(t, sharedRefs(reflect.ValueOf(r), reflect.ValueOf(got)), "the copy shares memory with the caller's row")
				if cur != nil {
					require.Equal(t, before, *cur, "the stored row was changed")
				}
			})
		}
	}
}

// sharedRefs returns the slices, maps and pointers reachable from b that
// are also reachable from a (the same memory).
func sharedRefs(a, b reflect.Value) []string {
	seen := map[uintptr]bool{}
	refs(a, "", func(_ string, p uintptr) { seen[p] = true })
	var shared []string
	refs(b, "", func(path string, p uintptr) {
		if seen[p] {
			shared = append(shared, path)
		}
	})
	return shared
}

// refs calls f with the address of every slice array, map and pointer
// target reachable from v.
func refs(v reflect.Value, path string, f func(path string, p uintptr)) {
	switch v.Kind() {
	case reflect.Slice:
		if v.Cap() > 0 {
			f(path, v.Pointer())
		}
		for i := range v.Len() {
			refs(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f)
		}
	case reflect.Map:
		if !v.IsNil() {
			f(path, v.Pointer())
		}
		for it := v.MapRange(); it.Next(); {
			refs(it.Value(), path+"[…]", f)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			f(path, v.Pointer())
			refs(v.Elem(), path+".*", f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			refs(v.Field(i), path+"."+v.Type().Field(i).Name, f)
		}
	}
}
