package etcdstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Every table's value type is copyable, and a copy shares no memory with
// its original: every pointer, slice and map reachable from a value whose
// fields are all set is a different one in the copy.
func TestValueCopies(t *testing.T) {
	for _, table := range storedTables() {
		t.Run(string(table), func(t *testing.T) {
			c, ok := codecOf(table)
			require.True(t, ok)
			zero, err := c.value([]byte("{}"))
			require.NoError(t, err)
			orig := reflect.New(reflect.TypeOf(zero)).Elem()
			fill(orig, 0)
			v := orig.Interface()
			require.True(t, copyable(v))
			cp := copyValue(v)
			require.Equal(t, v, cp)
			requireNoSharedMemory(t, reflect.ValueOf(v), reflect.ValueOf(cp), table)
		})
	}
}

// A value decoded once per observation is copied out to every reader: what
// one reader changes, the next one does not see.
func TestDecodedValuesAreCopiedOut(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	storedIn(t)(f.s.UpdateMeshNode(t.Context(), meshNode("m", "node-a", a), location.IntentNewClaim))
	o, ok := f.s.engine.Cached(f.s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(location.MeshNodeKey{MeshName: "m", RID: "node-a"})))
	require.True(t, ok)
	first, err := decodeRecord(location.TableMeshNodes, o)
	require.NoError(t, err)
	_, memoized := o.Derived()
	require.True(t, memoized)
	want := rules.CloneMeshNode(first.Value.(location.MeshNodeDescriptor))

	d := first.Value.(location.MeshNodeDescriptor)
	d.ChannelWeights["orders"] = 1
	d.SpotTypes[0] = "changed"
	d.PopulationCapacity.SpotTypes[0].StableType = "changed"
	second, err := decodeRecord(location.TableMeshNodes, o)
	require.NoError(t, err)
	require.Equal(t, want, second.Value)

	lit := txn.Observation{Key: o.Key, Present: true, Value: o.Value, ModRevision: o.ModRevision}
	fresh, shared, err := sharedRecord(location.TableMeshNodes, lit)
	require.NoError(t, err)
	require.False(t, shared, "a literal observation has no room for the decoded form")
	require.Equal(t, want, fresh.Value)
}

// fill sets every settable field of v to a non-zero value: pointers point
// at filled values, slices and maps hold one filled element.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.UnixMilli(1_782_950_400_000).UTC()))
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

// requireNoSharedMemory walks a and b (equal values) in step and fails
// where they share a pointer, a slice's array or a map.
func requireNoSharedMemory(t *testing.T, a, b reflect.Value, path any) {
	t.Helper()
	if a.Type() == reflect.TypeFor[time.Time]() {
		return // immutable
	}
	switch a.Kind() {
	case reflect.Interface:
		if !a.IsNil() {
			requireNoSharedMemory(t, a.Elem(), b.Elem(), path)
		}
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%v: pointer shared", path)
		requireNoSharedMemory(t, a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				requireNoSharedMemory(t, a.Field(i), b.Field(i), fmt.Sprint(path, ".", a.Type().Field(i).Name))
			}
		}
	case reflect.Slice:
		if a.Len() == 0 {
			return
		}
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%v: slice shared", path)
		for i := range a.Len() {
			requireNoSharedMemory(t, a.Index(i), b.Index(i), path)
		}
	case reflect.Map:
		if a.Len() == 0 {
			return
		}
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%v: map shared", path)
		iter := a.MapRange()
		for iter.Next() {
			requireNoSharedMemory(t, iter.Value(), b.MapIndex(iter.Key()), path)
		}
	}
}
