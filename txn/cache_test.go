package txn

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func present(key string, rev int64) Observation {
	return Observation{Key: key, Present: true, Value: []byte(key), ModRevision: rev, Revision: rev}
}

// The cache's shards: as many as keep 64 keys each, up to 32, and their
// limits add up to the cache's.
func TestCacheShards(t *testing.T) {
	for _, tc := range []struct {
		limit, shards int
	}{
		{1, 1}, {100, 1}, {127, 1}, {128, 2}, {200, 2}, {256, 4}, {1000, 8},
		{DefaultCacheSize, 32}, {0, 32}, {1 << 20, 32},
	} {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			c := newCache(tc.limit)
			require.Len(t, c.shards, tc.shards)
			sum := 0
			for i := range c.shards {
				sum += c.shards[i].limit
			}
			want := tc.limit
			if want == 0 {
				want = DefaultCacheSize
			}
			require.Equal(t, want, sum)
		})
	}
	require.True(t, newCache(-1).disabled)
}

// get, store, forget and view, on a one-shard cache (whose eviction is
// least-recently-used across all its keys) and on a sharded one.
func TestCache(t *testing.T) {
	type step struct {
		do   string // store, get, forget, view
		obs  Observation
		keys []string // view: keys, then absent after "|"
		// want: get's observation (nil: a miss); view's result.
		want   *Observation
		wantOK bool
		// viewed: the view's observations after a view, by key.
		viewed map[string]Observation
	}
	a1, a2, b1, c1 := present("a", 1), present("a", 2), present("b", 1), present("c", 3)
	ptr := func(o Observation) *Observation { return &o }
	for _, tc := range []struct {
		name  string
		limit int
		steps []step
	}{
		{"newer replaces older, never the reverse", 2, []step{
			{do: "store", obs: a1},
			{do: "get", obs: Observation{Key: "a"}, want: &a1},
			{do: "store", obs: a2},
			{do: "store", obs: a1},
			{do: "get", obs: Observation{Key: "a"}, want: &a2},
			{do: "store", obs: Observation{Key: "a", Revision: 5}},
			{do: "get", obs: Observation{Key: "a"}, want: ptr(Observation{Key: "a", Revision: 5})},
		}},
		{"least recently used is evicted", 2, []step{
			{do: "store", obs: a1},
			{do: "store", obs: b1},
			{do: "get", obs: Observation{Key: "a"}, want: &a1},
			{do: "store", obs: c1},
			{do: "get", obs: Observation{Key: "b"}},
			{do: "get", obs: Observation{Key: "a"}, want: &a1},
			{do: "get", obs: Observation{Key: "c"}, want: &c1},
		}},
		{"forget", 2, []step{
			{do: "store", obs: a1},
			{do: "forget", obs: Observation{Key: "a"}},
			{do: "get", obs: Observation{Key: "a"}},
			{do: "forget", obs: Observation{Key: "missing"}},
		}},
		{"view: every key or nothing", 4096, []step{
			{do: "store", obs: a1},
			{do: "store", obs: b1},
			{do: "view", keys: []string{"a", "c"}, wantOK: false, viewed: map[string]Observation{}},
			{do: "view", keys: []string{"a", "b", "|", "c", "absent"}, wantOK: true, viewed: map[string]Observation{
				"a": a1, "b": b1, "c": {Key: "c"}, "absent": {Key: "absent"}}},
			{do: "store", obs: c1},
			{do: "view", keys: []string{"|", "c"}, wantOK: true, viewed: map[string]Observation{"c": c1}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(tc.limit)
			for i, s := range tc.steps {
				switch s.do {
				case "store":
					c.store(s.obs)
				case "forget":
					c.forget(s.obs.Key)
				case "get":
					got, ok := c.get(s.obs.Key)
					if s.want == nil {
						require.False(t, ok, "step %d", i)
						continue
					}
					require.True(t, ok, "step %d", i)
					require.Equal(t, *s.want, got, "step %d", i)
				case "view":
					var keys, absent []string
					into := &keys
					for _, k := range s.keys {
						if k == "|" {
							into = &absent
							continue
						}
						*into = append(*into, k)
					}
					v := newView()
					require.Equal(t, s.wantOK, c.view(v, keys, absent), "step %d", i)
					got := map[string]Observation{}
					for k, o := range v.obs {
						got[k] = o
					}
					require.Equal(t, s.viewed, got, "step %d", i)
				}
			}
		})
	}
}

// A sharded cache never holds more than its limit, and concurrent callers
// (run with -race) see only observations that were stored.
func TestCacheConcurrent(t *testing.T) {
	const limit, keys, callers = 256, 1000, 8
	c := newCache(limit)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range keys {
				k := fmt.Sprintf("k%04d", (i*7+g)%keys)
				c.store(present(k, int64(i+1)))
				if o, ok := c.get(k); ok {
					require.Equal(t, k, o.Key)
				}
				v := newView()
				if c.view(v, []string{k}, []string{"absent-" + k}) {
					require.Equal(t, k, v.obs[k].Key)
				}
				if i%10 == 0 {
					c.forget(k)
				}
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, c.len(), limit)
	for i := range c.shards {
		s := &c.shards[i]
		require.LessOrEqual(t, len(s.items), s.limit)
		require.Equal(t, len(s.items), s.order.Len())
	}
	off := newCache(-1)
	off.store(present("a", 1))
	_, ok := off.get("a")
	require.False(t, ok)
	require.Zero(t, off.len())
}
