package txn

import (
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Send settles a guarded transaction the caller built. The engine here has
// no watcher: a lost response that the state does not settle cannot be
// searched in the history, so every case but the last proves that the
// state (or a nonce) settled it.
func TestSend(t *testing.T) {
	const nonce, earlier = "nonce-0123456789abcdef0123456789", "earlier-0123456789abcdef01234567"
	type setup struct {
		f *fixture
		k string
		// existing is the key as written before the send (zero: absent).
		existing Observation
	}
	putDoc := func(s setup) []clientv3.Op {
		return []clientv3.Op{clientv3.OpPut(s.k, string(encodeDoc(t, "mine", nonce)))}
	}
	absentGuard := func(s setup) Guarded {
		return Guarded{If: []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(s.k), "=", 0)}, Then: putDoc(s),
			Read: []string{s.k}, Nonce: nonce, Puts: []string{s.k}, Absent: []string{s.k}, SentAfter: s.f.e.LastRevision()}
	}
	tests := []struct {
		name string
		// before writes the key first ("": absent), with data before.
		before string
		// applied, lost: what the flaky KV does to the send (neither: sent).
		applied, lost bool
		guarded       func(s setup) Guarded
		check         func(t *testing.T, s setup, sent Sent)
		wantErr       error
	}{
		{name: "applied", guarded: absentGuard, check: func(t *testing.T, s setup, sent Sent) {
			require.Equal(t, Sent{Applied: true, Revision: s.f.modRevision(t, s.k), Nonce: nonce}, sent)
		}},
		{name: "compare failed: Now holds the keys as read", before: "other", guarded: absentGuard, check: func(t *testing.T, s setup, sent Sent) {
			require.False(t, sent.Applied || sent.Lost)
			require.Equal(t, s.existing.ModRevision, sent.Now.Keys[s.k].ModRevision)
			require.GreaterOrEqual(t, sent.Now.Revision, s.existing.ModRevision)
		}},
		{name: "lost, applied: the nonce", applied: true, guarded: absentGuard, check: func(t *testing.T, s setup, sent Sent) {
			require.ErrorContains(t, sent.Err, "request timed out", "the error that lost the response")
			sent.Err = nil
			require.Equal(t, Sent{Applied: true, Lost: true, Revision: s.f.modRevision(t, s.k), Nonce: nonce}, sent)
		}},
		{name: "lost, not applied: a key required absent exists since before", before: "other", applied: true, guarded: absentGuard,
			check: func(t *testing.T, s setup, sent Sent) {
				require.True(t, sent.Lost)
				require.False(t, sent.Applied)
				require.True(t, sent.Now.Keys[s.k].Present)
			}},
		{name: "lost, not applied: a deleted key is still the same incarnation", before: "other", lost: true,
			guarded: func(s setup) Guarded {
				marker := s.k + "-marker"
				return Guarded{If: []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(s.k), "=", s.existing.CreateRevision)},
					Then: []clientv3.Op{clientv3.OpDelete(s.k), clientv3.OpPut(marker, nonce)},
					Read: []string{s.k}, Nonce: nonce, Puts: []string{marker}, Deletes: []string{s.k},
					Before: map[string]Observation{s.k: s.existing}}
			},
			check: func(t *testing.T, s setup, sent Sent) {
				require.True(t, sent.Lost && !sent.Applied)
				require.True(t, sent.Now.Keys[s.k].Present)
			}},
		{name: "lost, not applied: a put key is unchanged", before: "other", lost: true,
			guarded: func(s setup) Guarded {
				return Guarded{If: []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(s.k), "=", s.existing.ModRevision)},
					Then: putDoc(s), Read: []string{s.k}, Nonce: nonce, Puts: []string{s.k},
					Before: map[string]Observation{s.k: s.existing}}
			},
			check: func(t *testing.T, s setup, sent Sent) { require.True(t, sent.Lost && !sent.Applied) }},
		{name: "an earlier attempt landed", before: "earlier",
			guarded: func(s setup) Guarded {
				g := absentGuard(s)
				g.Earlier = []string{earlier}
				return g
			},
			check: func(t *testing.T, s setup, sent Sent) {
				require.Equal(t, Sent{Applied: true, Revision: s.existing.ModRevision, Nonce: earlier}, sent)
			}},
		{name: "state only: taken as not applied", lost: true,
			guarded: func(s setup) Guarded {
				g := absentGuard(s)
				g.StateOnly = true
				return g
			},
			check: func(t *testing.T, s setup, sent Sent) { require.True(t, sent.Lost && !sent.Applied) }},
		{name: "unsettled: the outcome is unknown", lost: true, guarded: absentGuard, wantErr: ErrOutcomeUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.e = New(f.rec, nil, Options{})
			s := setup{f: f, k: f.key("k")}
			if tc.before != "" {
				value := encodeDoc(t, tc.before, "x")
				if tc.before == "earlier" {
					value = encodeDoc(t, tc.before, earlier)
				}
				f.put(t, s.k, string(value))
				got, err := f.e.ReadKeys(t.Context(), []string{s.k}, 0)
				require.NoError(t, err)
				s.existing = got.Keys[s.k]
			}
			f.flaky.LoseNext(map[bool]int{true: 1}[tc.applied], map[bool]int{true: 1}[tc.lost], nil)
			sent, err := f.e.Send(t.Context(), "send", tc.guarded(s))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.NotErrorIs(t, err, location.ErrUnavailable)
				require.ErrorContains(t, err, "request timed out")
				require.ErrorContains(t, err, "no watcher", "the resolution's own error")
				return
			}
			require.NoError(t, err)
			tc.check(t, s, sent)
		})
	}
}

// modRevision reads key's ModRevision behind the engine's back.
func (f *fixture) modRevision(t *testing.T, key string) int64 {
	t.Helper()
	resp, err := f.client.Get(t.Context(), key)
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	return resp.Kvs[0].ModRevision
}
