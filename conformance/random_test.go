package conformance_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// memHarness is memstore with the given capabilities; wrap, when set,
// wraps the store.
func memHarness(name string, caps conformance.Capabilities, wrap func(*memstore.Store) location.Store) conformance.Harness {
	return conformance.Harness{
		Name: name,
		NewFixture: func(conformance.TB) conformance.Fixture {
			f, s, _ := memFixture(conformance.T0())
			if wrap != nil {
				f.Store = wrap(s)
			}
			return f
		},
		Capabilities: caps,
	}
}

// releaseAlwaysReleased is a broken store: releasing any token answers
// released.
type releaseAlwaysReleased struct{ *memstore.Store }

// ReleaseOwnerLease releases and claims success whatever happened.
func (s releaseAlwaysReleased) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	if _, err := s.Store.ReleaseOwnerLease(ctx, t); err != nil {
		return "", err
	}
	return location.KindReleased, nil
}

func TestRandomSuite(t *testing.T) {
	t.Run("a conforming store passes", func(t *testing.T) {
		h := memHarness("memstore", conformance.Capabilities{ExactNumbers: true, InMemorySemantics: true}, nil)
		rep := conformance.RunRandomSuite(t.Context(), h, conformance.RandomOptions{Seed: 3, Sequences: 40, IgnoreEnv: true})
		require.True(t, rep.OK(), "%+v", rep.Failures)
		require.Equal(t, 40, rep.Sequences)
		require.Positive(t, rep.Ops)
		require.Positive(t, rep.Outcomes["ClaimOwnerLease claimed"])
		require.Contains(t, rep.String(), "random memstore: 40 sequences")
		var out bytes.Buffer
		require.NoError(t, rep.WriteOutcomes(&out))
		require.Contains(t, out.String(), "ClaimOwnerLease claimed")
	})
	t.Run("a broken store is reported", func(t *testing.T) {
		h := memHarness("release-always", conformance.Capabilities{MeshNodeChangeStamp: false}, func(s *memstore.Store) location.Store {
			return releaseAlwaysReleased{s}
		})
		rep := conformance.RunRandomSuite(t.Context(), h, conformance.RandomOptions{Seed: 1, Sequences: 200, IgnoreEnv: true, ShrinkRuns: 50})
		require.False(t, rep.OK())
		require.Len(t, rep.Failures, 1)
		f := rep.Failures[0]
		require.Equal(t, "result-kind", f.Rule)
		require.True(t, strings.HasPrefix(f.Op, "ReleaseOwnerLease("), f.Op)
		require.Contains(t, f.Message, `model "stale", store "released"`)
		require.Contains(t, f.Message, "shrunk to ")
	})
	t.Run("a done context runs nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		h := memHarness("memstore", conformance.Capabilities{}, nil)
		rep := conformance.RunRandomSuite(ctx, h, conformance.RandomOptions{Sequences: 10, IgnoreEnv: true})
		require.True(t, rep.OK())
		require.Zero(t, rep.Sequences)
	})
}
