package txn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// setData is a decision that sets key to data and answers the generation it
// issued (Revision + 1 on create, kept otherwise) and the previous data.
type setResult struct {
	Generation int64
	Previous   string
}

func setData(t *testing.T, key, data string, runs *atomic.Int32) Decision[setResult] {
	return func(v *View) (setResult, Commit, error) {
		if runs != nil {
			runs.Add(1)
		}
		o, ok := v.Get(key)
		res := setResult{Generation: v.Revision(key) + 1}
		if ok {
			res.Previous = dataOf(t, o.Value)
		}
		return res, Commit{Writes: []Write{Put(key, encodeDoc(t, data, v.Nonce()))}}, nil
	}
}

func TestRunCreatesAndUpdates(t *testing.T) {
	f := newFixture(t, Options{})
	k := f.key("k")
	res, out, err := Run(t.Context(), f.e, "set", []string{k}, setData(t, k, "one", nil))
	require.NoError(t, err)
	require.True(t, out.Written)
	require.Equal(t, 1, out.Attempts)
	require.Equal(t, setResult{Generation: out.Revision}, res, "read revision + 1 is the commit's revision when nothing else wrote")
	got, ok := f.get(t, k)
	require.True(t, ok)
	require.Equal(t, "one", dataOf(t, []byte(got)))

	res, out2, err := Run(t.Context(), f.e, "set", []string{k}, setData(t, k, "two", nil))
	require.NoError(t, err)
	require.Equal(t, "one", res.Previous)
	require.Greater(t, out2.Revision, out.Revision)
}

// The engine re-runs the decision on the Else branch's values when a guard
// fails: the concurrent write is forced between the read and the commit.
func TestRunRetriesOnGuardFailure(t *testing.T) {
	f := newFixture(t, Options{})
	k := f.key("k")
	f.put(t, k, string(encodeDoc(t, "start", "x")))
	var runs atomic.Int32
	decide := func(v *View) (string, Commit, error) {
		n := runs.Add(1)
		o, _ := v.Get(k)
		if n == 1 {
			f.put(t, k, string(encodeDoc(t, "concurrent", "y")))
		}
		return dataOf(t, o.Value), Commit{Writes: []Write{Put(k, encodeDoc(t, "mine", v.Nonce()))}}, nil
	}
	f.rec.Reset()
	prev, out, err := Run(t.Context(), f.e, "set", []string{k}, decide)
	require.NoError(t, err)
	require.Equal(t, "concurrent", prev, "the answer is the second run's")
	require.Equal(t, int32(2), runs.Load())
	require.Equal(t, 2, out.Attempts)
	// One read, two transactions: the retry needed no extra read.
	require.Equal(t, map[string]int{CallGet: 1, CallTxn: 2}, f.rec.Counts())
}

func TestRunFetchesMisses(t *testing.T) {
	f := newFixture(t, Options{CacheSize: -1})
	a, b := f.key("a"), f.key("b")
	f.put(t, b, string(encodeDoc(t, "bee", "x")))
	var runs atomic.Int32
	decide := func(v *View) (string, Commit, error) {
		runs.Add(1)
		_, _ = v.Get(a)
		o, ok := v.Get(b)
		if !ok {
			return "absent", Commit{}, nil
		}
		return dataOf(t, o.Value), Commit{Writes: []Write{Put(a, encodeDoc(t, "copy", v.Nonce()))}}, nil
	}
	f.rec.Reset()
	got, out, err := Run(t.Context(), f.e, "copy", []string{a}, decide)
	require.NoError(t, err)
	require.Equal(t, "bee", got)
	require.True(t, out.Written)
	require.Equal(t, int32(2), runs.Load())
	// The miss is read at the first read's revision (a pinned Get).
	require.Equal(t, map[string]int{CallGet: 2, CallTxn: 1}, f.rec.Counts())
}

// A write of a key the decision never read is not blind: the engine reads
// the key and decides again with it guarded.
func TestRunGuardsWrittenKeys(t *testing.T) {
	f := newFixture(t, Options{CacheSize: -1})
	a := f.key("a")
	var runs atomic.Int32
	decide := func(v *View) (int, Commit, error) {
		runs.Add(1)
		return 0, Commit{Writes: []Write{Put(a, encodeDoc(t, "x", v.Nonce()))}}, nil
	}
	_, out, err := Run(t.Context(), f.e, "blind", nil, decide)
	require.NoError(t, err)
	require.True(t, out.Written)
	require.Equal(t, int32(2), runs.Load())
}

func TestRunNoWrite(t *testing.T) {
	t.Run("a fresh read answers without a transaction", func(t *testing.T) {
		f := newFixture(t, Options{})
		k := f.key("k")
		f.rec.Reset()
		got, out, err := Run(t.Context(), f.e, "read", []string{k}, func(v *View) (bool, Commit, error) {
			_, ok := v.Get(k)
			return ok, Commit{}, nil
		})
		require.NoError(t, err)
		require.False(t, got)
		require.Equal(t, Outcome{}, out)
		require.Equal(t, map[string]int{CallGet: 1}, f.rec.Counts())
	})
	t.Run("a cached view is verified", func(t *testing.T) {
		f := newFixture(t, Options{})
		k := f.key("k")
		_, _, err := Run(t.Context(), f.e, "set", []string{k}, setData(t, k, "one", nil))
		require.NoError(t, err)
		decide := func(v *View) (string, Commit, error) {
			o, _ := v.Get(k)
			return dataOf(t, o.Value), Commit{}, nil
		}
		f.rec.Reset()
		got, out, err := Run(t.Context(), f.e, "read", []string{k}, decide)
		require.NoError(t, err)
		require.Equal(t, "one", got)
		require.Equal(t, 1, out.Attempts)
		require.Equal(t, map[string]int{CallTxn: 1}, f.rec.Counts(), "one verifying transaction, no read")

		// A change behind the cache's back fails the verification; the Else
		// branch brings the new value and the decision answers from it.
		f.put(t, k, string(encodeDoc(t, "two", "z")))
		f.rec.Reset()
		got, out, err = Run(t.Context(), f.e, "read", []string{k}, decide)
		require.NoError(t, err)
		require.Equal(t, "two", got)
		require.Equal(t, 1, out.Attempts)
		require.Equal(t, map[string]int{CallTxn: 1}, f.rec.Counts())
	})
}

// Steady state: a key the engine wrote itself is in its cache, so the next
// write of it costs exactly one transaction.
func TestRunSteadyStateIsOneTxn(t *testing.T) {
	f := newFixture(t, Options{})
	k := f.key("k")
	_, first, err := Run(t.Context(), f.e, "set", []string{k}, setData(t, k, "one", nil))
	require.NoError(t, err)
	f.rec.Reset()
	res, out, err := Run(t.Context(), f.e, "set", []string{k}, setData(t, k, "two", nil))
	require.NoError(t, err)
	require.Equal(t, "one", res.Previous)
	require.Equal(t, first.Revision+1, res.Generation, "the cached observation carries its revision")
	require.True(t, out.Written)
	require.Equal(t, map[string]int{CallTxn: 1}, f.rec.Counts())
}

func TestRunOwnerGuard(t *testing.T) {
	f := newFixture(t, Options{CacheSize: -1})
	owner, row := f.key("owner"), f.key("row")
	f.put(t, owner, "v1")
	var runs atomic.Int32
	hook := func(int32) {}
	decide := func(v *View) (int64, Commit, error) {
		hook(runs.Add(1))
		gen, live := v.Owner(owner)
		if !live {
			return 0, Commit{}, nil
		}
		return gen, Commit{Writes: []Write{Put(row, encodeDoc(t, "x", v.Nonce()))}}, nil
	}
	// Rewriting the owner key (a lease renewal) does not fail the commit.
	hook = func(n int32) {
		if n == 1 {
			f.put(t, owner, "v2")
		}
	}
	_, out, err := Run(t.Context(), f.e, "owned", []string{owner, row}, decide)
	require.NoError(t, err)
	require.True(t, out.Written)
	require.Equal(t, int32(1), runs.Load())

	// Deleting and re-creating it (a new generation) does.
	runs.Store(0)
	hook = func(n int32) {
		if n == 1 {
			_, err := f.client.Delete(context.Background(), owner)
			require.NoError(t, err)
			f.put(t, owner, "v3")
		}
	}
	gen, _, err := Run(t.Context(), f.e, "owned", []string{owner, row}, decide)
	require.NoError(t, err)
	require.Equal(t, int32(2), runs.Load())
	resp, err := f.client.Get(context.Background(), owner)
	require.NoError(t, err)
	require.Equal(t, resp.Kvs[0].CreateRevision, gen)
}

func TestRunContention(t *testing.T) {
	f := newFixture(t, Options{MaxAttempts: 3})
	k := f.key("k")
	var runs atomic.Int32
	decide := func(v *View) (int, Commit, error) {
		runs.Add(1)
		_, _ = v.Get(k)
		f.put(t, k, string(encodeDoc(t, fmt.Sprint(runs.Load()), "z")))
		return 0, Commit{Writes: []Write{Put(k, encodeDoc(t, "mine", v.Nonce()))}}, nil
	}
	_, out, err := Run(t.Context(), f.e, "contended", []string{k}, decide)
	require.ErrorIs(t, err, ErrContention)
	require.ErrorIs(t, err, location.ErrUnavailable)
	require.Equal(t, 3, out.Attempts)
	got, _ := f.get(t, k)
	require.NotEqual(t, "mine", dataOf(t, []byte(got)))
}

func TestRunLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		writes int
		size   int
		reads  int
	}{
		{name: "too many operations", limits: Limits{MaxTxnOps: 4}, writes: 5, size: 10, reads: 2},
		{name: "too many bytes", limits: Limits{MaxRequestBytes: 4096}, writes: 1, size: 5000, reads: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{Limits: tc.limits, CacheSize: -1})
			keys := make([]string, tc.writes)
			for i := range keys {
				keys[i] = f.key(fmt.Sprint(i))
			}
			decide := func(v *View) (int, Commit, error) {
				var c Commit
				for _, k := range keys {
					v.Get(k)
					c.Writes = append(c.Writes, Put(k, encodeDoc(t, strings.Repeat("x", tc.size), v.Nonce())))
				}
				return 0, c, nil
			}
			f.rec.Reset()
			_, _, err := Run(t.Context(), f.e, "big", keys, decide)
			require.ErrorIs(t, err, location.ErrTooLarge)
			require.Equal(t, tc.reads, f.rec.Total(), "nothing but the reads was sent")
			for _, k := range keys {
				_, ok := f.get(t, k)
				require.False(t, ok)
			}
		})
	}
}

func TestRunRejectsBrokenCommits(t *testing.T) {
	f := newFixture(t, Options{})
	k := f.key("k")
	for name, c := range map[string]func(v *View) Commit{
		"no nonce":  func(*View) Commit { return Commit{Writes: []Write{Put(k, []byte("plain"))}} },
		"twice":     func(v *View) Commit { return Commit{Writes: []Write{Put(k, []byte(v.Nonce())), Delete(k)}} },
		"and touch": func(v *View) Commit { return Commit{Writes: []Write{Put(k, []byte(v.Nonce()))}, Touch: []string{k}} },
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Run(t.Context(), f.e, name, []string{k}, func(v *View) (int, Commit, error) {
				v.Get(k)
				return 0, c(v), nil
			})
			require.ErrorIs(t, err, location.ErrInternal)
		})
	}
	t.Run("decision errors pass through", func(t *testing.T) {
		boom := errors.New("boom")
		_, _, err := Run(t.Context(), f.e, "err", []string{k}, func(*View) (int, Commit, error) { return 0, Commit{}, boom })
		require.Equal(t, boom, err)
	})
}

// Touched keys (change stamps) are put unconditionally, once per commit:
// their Version counts the commits that touched them.
func TestRunTouch(t *testing.T) {
	f := newFixture(t, Options{})
	k, stamp := f.key("k"), f.key("stamp")
	for i := range 3 {
		_, _, err := Run(t.Context(), f.e, "set", []string{k}, func(v *View) (int, Commit, error) {
			v.Get(k)
			return 0, Commit{Writes: []Write{Put(k, encodeDoc(t, fmt.Sprint(i), v.Nonce()))}, Touch: []string{stamp, stamp}}, nil
		})
		require.NoError(t, err)
	}
	resp, err := f.client.Get(t.Context(), stamp)
	require.NoError(t, err)
	require.Equal(t, int64(3), resp.Kvs[0].Version)
}

// Lost responses are resolved by re-reading for the nonce (E-9).
func TestRunAmbiguous(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prior is the key's data before the run ("": absent).
		prior string
		// applied: the commit whose answer is lost applied.
		applied bool
		// overwrite is the data another writer puts after the lost commit
		// ("": nothing).
		overwrite string
		// wantRuns is how often the decision ran: 1 when the commit was
		// resolved as applied, 2 when it was decided again.
		wantRuns int32
		check    func(t *testing.T, f *fixture, k string, res setResult, out Outcome)
	}{
		{name: "applied", applied: true, wantRuns: 1, check: func(t *testing.T, f *fixture, k string, _ setResult, out Outcome) {
			resp, err := f.client.Get(t.Context(), k)
			require.NoError(t, err)
			require.Equal(t, resp.Kvs[0].ModRevision, out.Revision)
			require.Equal(t, int64(1), resp.Kvs[0].Version, "written once")
		}},
		{name: "not applied", prior: "zero", wantRuns: 2, check: func(t *testing.T, f *fixture, k string, _ setResult, _ Outcome) {
			resp, err := f.client.Get(t.Context(), k)
			require.NoError(t, err)
			require.Equal(t, int64(2), resp.Kvs[0].Version)
		}},
		{name: "applied then overwritten: found in the history", applied: true, overwrite: "later", wantRuns: 1, check: func(t *testing.T, f *fixture, k string, _ setResult, _ Outcome) {
			got, _ := f.get(t, k)
			require.Equal(t, "later", dataOf(t, []byte(got)))
		}},
		{name: "lost create, then someone else's write", overwrite: "other", wantRuns: 2, check: func(t *testing.T, _ *fixture, _ string, res setResult, _ Outcome) {
			require.Equal(t, "other", res.Previous, "decided again on the new state")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			k := f.key("k")
			if tc.prior != "" {
				f.put(t, k, string(encodeDoc(t, tc.prior, "x")))
			}
			var overwrite func()
			if tc.overwrite != "" {
				overwrite = func() { f.put(t, k, string(encodeDoc(t, tc.overwrite, "z"))) }
			}
			var runs atomic.Int32
			f.flaky.LoseOne(tc.applied, overwrite)
			res, out, err := Run(t.Context(), f.e, "set", []string{k}, setData(t, k, "one", &runs))
			require.NoError(t, err)
			require.True(t, out.Written)
			require.Equal(t, tc.wantRuns, runs.Load(), "1: resolved without deciding again; 2: decided again")
			tc.check(t, f, k, res, out)
		})
	}
	t.Run("delete-only commits carry the marker", func(t *testing.T) {
		f := newFixture(t, Options{MarkerKey: "/marker-" + t.Name()})
		k := f.key("k")
		f.put(t, k, "x")
		var runs atomic.Int32
		del := func(v *View) (bool, Commit, error) {
			runs.Add(1)
			if _, ok := v.Get(k); !ok {
				return false, Commit{}, nil
			}
			return true, Commit{Writes: []Write{Delete(k)}}, nil
		}
		f.flaky.LoseNext(1, 0, nil)
		deleted, out, err := Run(t.Context(), f.e, "del", []string{k}, del)
		require.NoError(t, err)
		require.True(t, deleted, "the delete happened: the marker carries the nonce")
		require.True(t, out.Written)
		require.Equal(t, int32(1), runs.Load())
	})
	t.Run("unknown when the history is gone", func(t *testing.T) {
		f := newFixture(t, Options{})
		k := f.key("k")
		f.flaky.LoseNext(1, 0, func() {
			rev := f.put(t, k, string(encodeDoc(t, "later", "z")))
			_, err := f.client.Compact(context.Background(), rev)
			require.NoError(t, err)
		})
		_, _, err := Run(t.Context(), f.e, "set", []string{k}, setData(t, k, "one", nil))
		require.ErrorIs(t, err, ErrOutcomeUnknown)
	})
}

func TestReadKeysChunks(t *testing.T) {
	f := newFixture(t, Options{Limits: Limits{MaxTxnOps: 2}})
	keys := []string{f.key("a"), f.key("b"), f.key("c"), f.key("a")}
	rev := f.put(t, keys[1], "bee")
	f.rec.Reset()
	obs, err := f.e.ReadKeys(t.Context(), keys, 0)
	require.NoError(t, err)
	require.Equal(t, map[string]int{CallTxn: 1, CallGet: 1}, f.rec.Counts(), "two chunks of the three distinct keys")
	require.Len(t, obs.Keys, 3)
	require.GreaterOrEqual(t, obs.Revision, rev)
	require.True(t, obs.Keys[keys[1]].Present)
	for _, o := range obs.Keys {
		require.Equal(t, obs.Revision, o.Revision, "every chunk is pinned to the first one's revision")
	}
	_, err = f.e.ReadKeys(t.Context(), keys, rev+1_000_000)
	require.Error(t, err, "a future revision")
}

func TestIsAmbiguous(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{context.Canceled, true},
		{clientv3.ErrNoAvailableEndpoints, true},
		{errors.New("rpc error: code = Unavailable desc = etcdserver: request timed out"), true},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, IsAmbiguous(tc.err), tc.err)
	}
	require.False(t, IsAmbiguous(nil))
}
