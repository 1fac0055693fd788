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
)

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
