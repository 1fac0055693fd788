package txn

import (
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// The copy-free compares and puts build exactly what their clientv3
// spellings build.
func TestOpsMatchClientv3(t *testing.T) {
	const key = "/zlink/v1/spots/k"
	for _, tc := range []struct {
		name      string
		got, want clientv3.Cmp
	}{
		{"mod revision equal", ModRevisionIs(key, 42), clientv3.Compare(clientv3.ModRevision(key), "=", 42)},
		{"mod revision below", ModRevisionBelow(key, 7), clientv3.Compare(clientv3.ModRevision(key), "<", 7)},
		{"create revision equal", CreateRevisionIs(key, 9), clientv3.Compare(clientv3.CreateRevision(key), "=", 9)},
		{"absent", CreateRevisionIs(key, 0), clientv3.Compare(clientv3.CreateRevision(key), "=", 0)},
		{"lease", LeaseIs(key, 0x1234), clientv3.Compare(clientv3.LeaseValue(key), "=", clientv3.LeaseID(0x1234))},
		{"no lease", LeaseIs(key, 0), clientv3.Compare(clientv3.LeaseValue(key), "=", clientv3.NoLease)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, proto.Equal(tc.want.GetCompare(), tc.got.GetCompare()), "got %v, want %v", tc.got.GetCompare(), tc.want.GetCompare())
		})
	}
	for _, tc := range []struct {
		name  string
		value []byte
		opts  []clientv3.OpOption
	}{
		{"value", []byte(`{"a":1}`), nil},
		{"empty value", []byte{}, nil},
		{"leased", []byte("v"), []clientv3.OpOption{clientv3.WithLease(0x99)}},
	} {
		t.Run("put "+tc.name, func(t *testing.T) {
			// Every field, the unexported ones included (key, value, lease).
			require.Equal(t, clientv3.OpPut(key, string(tc.value), tc.opts...), PutBytes(key, tc.value, tc.opts...))
		})
	}
}
