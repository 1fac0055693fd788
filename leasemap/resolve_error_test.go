package leasemap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// A write whose response was lost and whose resolution failed answers
// "outcome unknown" naming both causes: the lost response and the error
// that stopped the resolution (not the lost response twice).
func TestResolutionErrorIsReported(t *testing.T) {
	refused := status.Error(codes.PermissionDenied, "etcdserver: permission denied (resolution refused)")
	tests := []struct {
		name string
		call func(t *testing.T, f *fixture, m *Map) error
	}{
		{"claim", func(t *testing.T, _ *fixture, m *Map) error {
			_, err := m.Claim(t.Context(), "a", time.Minute)
			return err
		}},
		{"release", func(t *testing.T, f *fixture, m *Map) error {
			a := f.claim(t, "a")
			_, err := m.Release(t.Context(), a)
			return err
		}},
		{"renew", func(t *testing.T, f *fixture, m *Map) error {
			a := f.claim(t, "a")
			_, err := m.Renew(t.Context(), a, ttl30s)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			kv := &afterLossKV{KV: f.client.KV, refused: refused}
			m := f.newMap(kv, f.client.Lease, Options{Clock: f.clock.Now})
			err := tc.call(t, f, m)
			require.ErrorIs(t, err, txn.ErrOutcomeUnknown)
			require.NotErrorIs(t, err, location.ErrUnavailable, "the write may have applied")
			require.ErrorIs(t, err, refused, "the resolution's own error is reported: %v", err)
			require.ErrorContains(t, err, "request timed out", "and the lost response")
		})
	}
}
