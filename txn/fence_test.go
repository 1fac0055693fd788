package txn

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// withFences gives f's engine delete fences: one per first letter of the
// key's name below the fixture's prefix.
func withFences(f *fixture) {
	f.e = New(f.rec, f.client.Watcher, Options{DeleteFence: func(key string) string {
		name, ok := strings.CutPrefix(key, f.prefix)
		if !ok || name == "" || strings.HasPrefix(name, "fence/") {
			return ""
		}
		return f.prefix + "fence/" + name[:1]
	}})
}

// deleteKey deletes key through the engine (so its fence moves).
func deleteKey(t *testing.T, f *fixture, key string) {
	t.Helper()
	_, out, err := Run(t.Context(), f.e, "delete", []string{key}, func(v *View) (bool, Commit, error) {
		_, _ = v.Get(key)
		return true, Commit{Writes: []Write{Delete(key)}}, nil
	})
	require.NoError(t, err)
	require.True(t, out.Written)
}

// A generation issued from an absence (read revision + 1) must not repeat:
// while one writer decides from the key's absence, another creates the key
// (issuing the same read revision + 1) and deletes it again. The absence
// guard holds again at the first writer's commit; only the delete fence
// shows that something happened in between. This is the ABA of
// docs/reliability.md (two Reserves of one authority key, one aborted).
func TestRunFencesGenerationsIssuedFromAnAbsence(t *testing.T) {
	tests := []struct {
		name   string
		fenced bool
		// between is the key another writer creates and deletes after the
		// first run of the decision read k1 absent.
		between string
		// wantRuns is how often the decision runs.
		wantRuns int32
		// repeats: the generation issued equals the one the other writer
		// created k1 with (the bug the fences prevent).
		repeats bool
	}{
		{name: "created and deleted in between", fenced: true, between: "k1", wantRuns: 2},
		{name: "without fences the generation repeats", fenced: false, between: "k1", wantRuns: 1, repeats: true},
		{name: "a delete under another fence does not matter", fenced: true, between: "zz", wantRuns: 1},
		{name: "a delete of another key under the same fence retries", fenced: true, between: "k2", wantRuns: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			if tc.fenced {
				withFences(f)
			}
			k, other := f.key("k1"), f.key(tc.between)
			// A delete long before the read does not matter.
			f.put(t, k, string(encodeDoc(t, "old", "n")))
			deleteKey(t, f, k)

			var runs atomic.Int32
			var created int64 // the generation the other writer created k with
			create := setData(t, k, "mine", &runs)
			res, out, err := Run(t.Context(), f.e, "create", []string{k}, func(v *View) (setResult, Commit, error) {
				res, c, err := create(v)
				if runs.Load() == 1 {
					theirs, _, err := Run(t.Context(), f.e, "other create", []string{other}, setData(t, other, "other", nil))
					require.NoError(t, err)
					deleteKey(t, f, other)
					if other == k {
						created = theirs.Generation
					}
				}
				return res, c, err
			})
			require.NoError(t, err)
			require.True(t, out.Written)
			require.Equal(t, tc.wantRuns, runs.Load())
			if tc.repeats {
				require.Equal(t, created, res.Generation)
				return
			}
			require.Greater(t, res.Generation, created)
			got, ok := f.get(t, k)
			require.True(t, ok)
			require.Equal(t, "mine", dataOf(t, []byte(got)))
		})
	}
}

// A commit that deletes puts the fences of the keys it deletes (once each),
// with its nonce, so that it needs no write marker.
func TestCommitPutsTheFencesOfDeletedKeys(t *testing.T) {
	f := newFixture(t, Options{})
	withFences(f)
	a1, a2, b1 := f.key("a1"), f.key("a2"), f.key("b1")
	for _, k := range []string{a1, a2, b1} {
		f.put(t, k, string(encodeDoc(t, "x", "n")))
	}
	var nonce string
	_, out, err := Run(t.Context(), f.e, "delete", []string{a1, a2, b1}, func(v *View) (bool, Commit, error) {
		nonce = v.Nonce()
		var c Commit
		for _, k := range []string{a1, a2, b1} {
			_, _ = v.Get(k)
			c.Writes = append(c.Writes, Delete(k))
		}
		return true, c, nil
	})
	require.NoError(t, err)
	resp, err := f.client.Get(t.Context(), f.prefix, clientv3.WithPrefix())
	require.NoError(t, err)
	got := map[string]string{}
	for _, kv := range resp.Kvs {
		got[strings.TrimPrefix(string(kv.Key), f.prefix)] = string(kv.Value)
		require.Equal(t, out.Revision, kv.ModRevision)
	}
	require.Equal(t, map[string]string{"fence/a": nonce, "fence/b": nonce}, got)
}
