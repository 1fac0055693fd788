package txn

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key seen absent is cached: a decision that only guards its absence
// needs no read, and the commit re-asserts the absence.
func TestRunRemembersAbsentKeys(t *testing.T) {
	f := newFixture(t, Options{})
	row, claim := f.key("row"), f.key("claim")
	f.put(t, row, string(encodeDoc(t, "start", "x")))
	// Writes row unless claim exists.
	decide := func(v *View) (bool, Commit, error) {
		if _, claimed := v.Get(claim); claimed {
			return false, Commit{}, nil
		}
		_, _ = v.Get(row)
		return true, Commit{Writes: []Write{Put(row, encodeDoc(t, "mine", v.Nonce()))}}, nil
	}
	_, _, err := Run(t.Context(), f.e, "first", []string{row, claim}, decide)
	require.NoError(t, err)
	f.rec.Reset()
	wrote, _, err := Run(t.Context(), f.e, "steady", []string{row, claim}, decide)
	require.NoError(t, err)
	require.True(t, wrote)
	require.Equal(t, map[string]int{CallTxn: 1}, f.rec.Counts(), "the absent claim came from the cache")

	// The claim appears behind the cache's back: the guard fails and the
	// Else branch brings it.
	f.put(t, claim, "held")
	f.rec.Reset()
	wrote, out, err := Run(t.Context(), f.e, "claimed", []string{row, claim}, decide)
	require.NoError(t, err)
	require.False(t, wrote)
	require.Equal(t, 1, out.Attempts)
	require.Equal(t, map[string]int{CallTxn: 1}, f.rec.Counts())
}

// A generation is never issued from a remembered absence: the key is read
// again first (decision E-3), here after it was created and deleted behind
// the cache's back.
func TestRunRevisionOfARememberedAbsence(t *testing.T) {
	f := newFixture(t, Options{})
	k := f.key("k")
	read := func(v *View) (bool, Commit, error) {
		_, ok := v.Get(k)
		return ok, Commit{}, nil
	}
	_, _, err := Run(t.Context(), f.e, "read", []string{k}, read)
	require.NoError(t, err)
	o, ok := f.e.Cached(k)
	require.True(t, ok)
	require.False(t, o.Present)

	created := f.put(t, k, string(encodeDoc(t, "other", "y")))
	_, err = f.client.Delete(t.Context(), k)
	require.NoError(t, err)

	var runs atomic.Int32
	f.rec.Reset()
	res, out, err := Run(t.Context(), f.e, "create", []string{k}, setData(t, k, "mine", &runs))
	require.NoError(t, err)
	require.True(t, out.Written)
	require.Greater(t, res.Generation, created, "issued from a fresh read, above the deleted incarnation")
	require.Equal(t, int32(2), runs.Load(), "the remembered absence was a miss")
	require.Equal(t, map[string]int{CallGet: 1, CallTxn: 1}, f.rec.Counts())
}

// Prefetch.Absent keys are assumed absent when the other keys are cached;
// the guard catches the ones that exist after all.
func TestRunWithAbsentKeys(t *testing.T) {
	f := newFixture(t, Options{})
	row := f.key("row")
	f.put(t, row, string(encodeDoc(t, "start", "x")))
	_, _, err := Run(t.Context(), f.e, "warm", []string{row}, setData(t, row, "warm", nil))
	require.NoError(t, err)

	// Writes a fresh terminal key and the row, unless the terminal exists.
	publish := func(terminal string, runs *atomic.Int32) Decision[bool] {
		return func(v *View) (bool, Commit, error) {
			runs.Add(1)
			if _, done := v.Get(terminal); done {
				return false, Commit{}, nil
			}
			_, _ = v.Get(row)
			return true, Commit{Writes: []Write{
				Put(terminal, encodeDoc(t, "done", v.Nonce())),
				Put(row, encodeDoc(t, "published", v.Nonce())),
			}}, nil
		}
	}
	t.Run("absent as expected", func(t *testing.T) {
		terminal := f.key("t1")
		var runs atomic.Int32
		f.rec.Reset()
		wrote, out, err := RunWith(t.Context(), f.e, "publish", Prefetch{Keys: []string{row}, Absent: []string{terminal}}, publish(terminal, &runs))
		require.NoError(t, err)
		require.True(t, wrote)
		require.True(t, out.Written)
		require.Equal(t, int32(1), runs.Load())
		require.Equal(t, map[string]int{CallTxn: 1}, f.rec.Counts(), "no read")
	})
	t.Run("present after all", func(t *testing.T) {
		terminal := f.key("t2")
		f.put(t, terminal, string(encodeDoc(t, "done", "z")))
		var runs atomic.Int32
		f.rec.Reset()
		wrote, _, err := RunWith(t.Context(), f.e, "publish", Prefetch{Keys: []string{row}, Absent: []string{terminal}}, publish(terminal, &runs))
		require.NoError(t, err)
		require.False(t, wrote, "decided again on the Else branch's value")
		require.Equal(t, int32(2), runs.Load())
		require.Equal(t, map[string]int{CallTxn: 1}, f.rec.Counts())
	})
	t.Run("read with the other keys when they are not cached", func(t *testing.T) {
		other, terminal := f.key("other"), f.key("t3")
		var runs atomic.Int32
		f.rec.Reset()
		_, _, err := RunWith(t.Context(), f.e, "publish", Prefetch{Keys: []string{row, other}, Absent: []string{terminal}}, publish(terminal, &runs))
		require.NoError(t, err)
		require.Equal(t, int32(1), runs.Load())
		require.Equal(t, map[string]int{CallTxn: 2}, f.rec.Counts(), "one read of all three keys, one commit")
	})
}
