package etcdstore

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/filled"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// decodedAgain decodes, as a reader of the store does (decodeFresh), the value
// the store writes for value, at ModRevision 42.
func decodedAgain(t *testing.T, table rules.Table, value any, generation int64) rules.Record {
	t.Helper()
	b, err := encodeValue(table, value, generation, goldenNonce, goldenTime)
	require.NoError(t, err)
	rec, err := decodeFresh(table, txn.Observation{Key: "k", Present: true, Value: b, ModRevision: 42})
	require.NoError(t, err)
	return rec
}

// memoized returns the record a reader gets from the decoded form the commit
// attaches (decodedForm, at ModRevision 42), and whether there is one. For
// the rows encoded by hand, the encoder's verdict on the round trip must be
// jsonExact's.
func memoized(t *testing.T, x jsonExact, table rules.Table, value any, generation int64) (rules.Record, bool) {
	t.Helper()
	s := &Store{exact: x}
	_, rt, err := appendValue(nil, table, value, generation, goldenNonce, goldenTime)
	require.NoError(t, err)
	if spec, _ := rules.Lookup(table); rt != roundTripUnknown && spec.Holds(value) {
		v := value
		if row, ok := v.(rules.AuthorityRow); ok {
			row.StoreVersion = ""
			v = row
		}
		require.Equal(t, x.survives(table, v), rt == roundTripExact, "the encoder and jsonExact disagree on %#v", value)
	}
	d := s.decodedForm(rules.Write{Table: table, Value: value, Generation: generation}, rt)
	if d == nil {
		return rules.Record{}, false
	}
	if at, ok := d.(txn.DerivedAt); ok {
		d = at.DeriveAt(42)
	}
	return d.(decodedRecord).rec, true
}

// Whenever the store attaches a decoded form to a value it writes, that form
// is exactly (reflect.DeepEqual: nil is not empty) what decoding the written
// bytes gives: for every table, on values with every field set, and on
// random values that favour what JSON loses (empty slices and maps, invalid
// UTF-8, times outside UTC or with a monotonic reading, interfaces).
func TestJSONExact(t *testing.T) {
	x := newJSONExact()
	rng := rand.New(rand.NewPCG(1, 2))
	const perTable = 2000
	for _, spec := range rules.Tables() {
		t.Run(string(spec.Name()), func(t *testing.T) {
			full := filled.Value(spec.Type())
			got, ok := memoized(t, x, spec.Name(), full, 7)
			require.True(t, ok, "a value with every field set survives JSON")
			require.True(t, reflect.DeepEqual(decodedAgain(t, spec.Name(), full, 7), got))

			exact := 0
			for range perTable {
				v := reflect.New(spec.Type()).Elem()
				randomFill(rng, v, 0)
				value := v.Interface()
				got, ok := memoized(t, x, spec.Name(), value, 3)
				if !ok {
					continue
				}
				exact++
				want := decodedAgain(t, spec.Name(), value, 3)
				require.Truef(t, reflect.DeepEqual(want, got), "decoded %#v\nmemoized %#v", want.Value, got.Value)
			}
			t.Logf("%d of %d random values memoized", exact, perTable)
		})
	}
}

// The values JSON changes are recognised.
func TestJSONExactLossy(t *testing.T) {
	x := newJSONExact()
	tok := location.OwnerToken{OwnerID: "owner", LeaseGeneration: 1}
	now := time.UnixMilli(1_782_950_400_123).UTC()
	withNode := func(f func(d *location.MeshNodeDescriptor)) location.MeshNodeDescriptor {
		d := meshNode("m", "n", tok)
		d.UpdatedAt = now
		f(&d)
		return d
	}
	withPeer := func(f func(p *location.PeerLocation)) location.PeerLocation {
		p := peer("n", "owner")
		p.UpdatedAt = now
		f(&p)
		return p
	}
	cases := []struct {
		name  string
		table rules.Table
		value any
		exact bool
	}{
		{"descriptor", location.TableMeshNodes, withNode(func(*location.MeshNodeDescriptor) {}), true},
		{"descriptor, empty slices and map", location.TableMeshNodes, withNode(func(d *location.MeshNodeDescriptor) {
			d.SpotTypes, d.ObjectCapabilities, d.ChannelWeights = []string{}, []location.ObjectCapability{}, map[string]int64{}
		}), true},
		{"descriptor, opaque routing id", location.TableMeshNodes, withNode(func(d *location.MeshNodeDescriptor) { d.RID = "\xff\x00" }), true},
		{"descriptor, invalid UTF-8", location.TableMeshNodes, withNode(func(d *location.MeshNodeDescriptor) { d.Endpoint = "\xff" }), false},
		{"descriptor, invalid UTF-8 map key", location.TableMeshNodes, withNode(func(d *location.MeshNodeDescriptor) { d.ChannelWeights["\xfe"] = 1 }), false},
		{"descriptor, time with a zone", location.TableMeshNodes, withNode(func(d *location.MeshNodeDescriptor) {
			d.UpdatedAt = now.In(time.FixedZone("x", 3600))
		}), false},
		{"descriptor, monotonic time", location.TableMeshNodes, withNode(func(d *location.MeshNodeDescriptor) { d.UpdatedAt = time.Now() }), false},
		{"peer", location.TablePeers, withPeer(func(*location.PeerLocation) {}), true},
		{"peer, metadata", location.TablePeers, withPeer(func(p *location.PeerLocation) { p.Metadata = map[string]string{"a": "b"} }), true},
		{"peer, empty metadata (omitempty)", location.TablePeers, withPeer(func(p *location.PeerLocation) { p.Metadata = map[string]string{} }), false},
		{"peer, empty capabilities (omitempty)", location.TablePeers, withPeer(func(p *location.PeerLocation) { p.Capabilities = []string{} }), false},
		{"authority row, empty payload", rules.TableAuthority, rules.AuthorityRow{Payload: []byte{}, Owner: tok}, true},
		{"authority row, store version (not stored)", rules.TableAuthority, rules.AuthorityRow{StoreVersion: "9", Owner: tok}, true},
		{"value of another type", location.TableSpots, withPeer(func(*location.PeerLocation) {}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := memoized(t, x, tc.table, tc.value, 1)
			require.Equal(t, tc.exact, ok)
			if ok {
				require.True(t, reflect.DeepEqual(decodedAgain(t, tc.table, tc.value, 1), got))
			}
		})
	}
}

// The envelope is the bytes json.Marshal writes for it.
func TestEnvelopeBytes(t *testing.T) {
	raw := json.RawMessage(`{"a":"\u003cb\u003e","c":[1,2]}`)
	for _, tc := range []struct {
		table      rules.Table
		nonce      string
		generation int64
	}{
		{location.TableSpots, goldenNonce, 0},
		{location.TableMeshNodes, goldenNonce, 7},
		{"x", "", -3},
		{"<&>", "a\"b\\c\u2028\xff\x01", 1 << 62},
	} {
		want, err := json.Marshal(envelope{Format: formatOf(tc.table), Generation: tc.generation, WrittenAtMs: 1_782_950_400_123, Nonce: tc.nonce, Value: raw})
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendEnvelope(nil, tc.table, tc.generation, 1_782_950_400_123, tc.nonce, raw)))
	}
}

// A stored value is, byte for byte, encoding/json's envelope around
// encoding/json's row (an authority row without its StoreVersion, which is
// not stored), whichever way the store encodes it (by hand for the hot
// rows, the authority row included, or by json.Marshal): on every table's
// value with every field set, and on random values of the hand-encoded
// rows, their StoreVersion set.
func TestEncodeValueIsJSONMarshal(t *testing.T) {
	want := func(t *testing.T, table rules.Table, v any, generation int64) string {
		t.Helper()
		if row, ok := v.(rules.AuthorityRow); ok {
			row.StoreVersion = ""
			v = row
		}
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		env, err := json.Marshal(envelope{Format: formatOf(table), Generation: generation, WrittenAtMs: goldenTime.UnixMilli(), Nonce: goldenNonce, Value: raw})
		require.NoError(t, err)
		return string(env)
	}
	var e encoder
	check := func(t *testing.T, table rules.Table, v any, generation int64) {
		t.Helper()
		if _, err := json.Marshal(v); err != nil {
			return // refused by both (TestRowJSON)
		}
		got, err := encodeValue(table, v, generation, goldenNonce, goldenTime)
		require.NoError(t, err)
		require.Equal(t, want(t, table, v, generation), string(got))
		pooled, _, err := e.encode(table, v, generation, goldenNonce, goldenTime)
		require.NoError(t, err)
		require.Equal(t, string(got), string(pooled), "the store's pooled encoder")
	}
	for _, spec := range rules.Tables() {
		t.Run(string(spec.Name()), func(t *testing.T) {
			check(t, spec.Name(), filled.Value(spec.Type()), 7)
		})
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		table rules.Table
		typ   reflect.Type
	}{
		{location.TableSpots, reflect.TypeFor[location.SpotLocation]()},
		{location.TableActors, reflect.TypeFor[location.ActorLocation]()},
		{location.TablePeers, reflect.TypeFor[location.PeerLocation]()},
		{location.TableMeshNodes, reflect.TypeFor[location.MeshNodeDescriptor]()},
		{rules.TableAuthority, reflect.TypeFor[rules.AuthorityRow]()},
	} {
		t.Run("random "+string(tc.table), func(t *testing.T) {
			for i := range 500 {
				v := reflect.New(tc.typ).Elem()
				randomFill(rng, v, 0)
				check(t, tc.table, v.Interface(), int64(i%3))
			}
		})
	}
	t.Run("authority with a store version", func(t *testing.T) {
		check(t, rules.TableAuthority, rules.AuthorityRow{StoreVersion: "42", Payload: []byte("p")}, 0)
	})
}

// randomFill sets v to a random value that often holds what JSON does not
// keep: empty but non-nil slices and maps, invalid UTF-8, times in other
// zones or with a monotonic reading, non-nil interfaces.
func randomFill(rng *rand.Rand, v reflect.Value, depth int) {
	if depth > 6 || !v.CanSet() {
		return
	}
	if v.Type() == timeType {
		switch rng.IntN(4) {
		case 0:
			v.Set(reflect.ValueOf(time.Now()))
		case 1:
			v.Set(reflect.ValueOf(time.UnixMilli(rng.Int64N(1 << 42)).In(time.FixedZone("z", 7200))))
		case 2:
			v.Set(reflect.ValueOf(time.Time{}))
		default:
			v.Set(reflect.ValueOf(time.Unix(rng.Int64N(1<<33), rng.Int64N(1e9)).UTC()))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		randomFill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && rng.IntN(8) != 0 {
				randomFill(rng, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		switch n := rng.IntN(4); n {
		case 0: // nil
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				randomFill(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := rng.IntN(4); n {
		case 0: // nil
		default:
			m := reflect.MakeMap(v.Type())
			for range n - 1 {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				randomFill(rng, k, depth+1)
				randomFill(rng, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.String:
		v.SetString([]string{"", "x", "node-1", "é\u2028<&>", "\xff", "\x00\n"}[rng.IntN(6)])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64N(1000) - 100)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rng.Uint64N(256))
	case reflect.Interface:
		if rng.IntN(2) == 0 {
			v.Set(reflect.ValueOf("x"))
		}
	}
}

// The rows encoded by hand are encoded exactly as json.Marshal encodes them
// (and refused where it refuses them): on values with every field set, on
// random values (odd strings, empty and nil slices and maps, times in other
// zones), and on the edge cases below.
func TestRowJSON(t *testing.T) {
	types := []reflect.Type{
		reflect.TypeFor[location.SpotLocation](),
		reflect.TypeFor[location.ActorLocation](),
		reflect.TypeFor[location.PeerLocation](),
		reflect.TypeFor[location.MeshNodeDescriptor](),
		reflect.TypeFor[rules.AuthorityRow](),
	}
	check := func(t *testing.T, v any) {
		t.Helper()
		want, err := json.Marshal(v)
		got, ok, _ := appendRowJSON([]byte("prefix"), v)
		if err != nil {
			require.False(t, ok, "json.Marshal refuses %#v (%v)", v, err)
			return
		}
		require.True(t, ok, "%#v", v)
		require.Equal(t, "prefix"+string(want), string(got))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, typ := range types {
		t.Run(typ.Name(), func(t *testing.T) {
			check(t, filled.Value(typ))
			for range 3000 {
				v := reflect.New(typ).Elem()
				randomFill(rng, v, 0)
				check(t, v.Interface())
			}
		})
	}
	t.Run("strings", func(t *testing.T) {
		var all []byte
		for c := range 256 {
			all = append(all, byte(c))
		}
		for _, s := range []string{"", string(all), "\b\f\n\r\t\x00\x1f\x7f", "<a href=\"x\">&amp;</a>\\", "\u2028\u2029\u00e9\U0001F600", "\xed\xa0\x80", "\xf0\x9f\x98", "é\xff"} {
			check(t, location.SpotLocation{SpotID: s, OwnerNodeRID: location.RoutingID(s), UpdatedAt: goldenTime})
			check(t, location.PeerLocation{Metadata: map[string]string{s: s, "a" + s: ""}, Capabilities: []string{s}, UpdatedAt: goldenTime})
		}
	})
	t.Run("times", func(t *testing.T) {
		for _, tm := range []time.Time{
			{}, goldenTime, time.Now(), goldenTime.Add(123456789),
			goldenTime.In(time.FixedZone("e", 5*3600+1800)), goldenTime.In(time.FixedZone("w", -9*3600)),
			goldenTime.In(time.FixedZone("far", 24*3600)), goldenTime.In(time.FixedZone("odd", 3600+7)),
			time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		} {
			check(t, location.ActorLocation{UpdatedAt: tm})
		}
	})
	t.Run("authority", func(t *testing.T) {
		check(t, rules.AuthorityRow{})
		check(t, rules.AuthorityRow{StoreVersion: "7", Payload: []byte{}, Creation: &rules.CreationInfo{Terminal: "committed"}})
		check(t, rules.AuthorityRow{Payload: make([]byte, 257), PendingCreation: &location.PendingCreation{RequestSHA256: []byte{1}}})
	})
	t.Run("other types", func(t *testing.T) {
		_, ok, _ := appendRowJSON(nil, location.RouteLocation{})
		require.False(t, ok)
	})
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
	want := first.Value.(location.MeshNodeDescriptor).Clone()

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
