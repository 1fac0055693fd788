package txn

import (
	"testing"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// The copy-free compares build exactly what their clientv3
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
}

// The engine's own compares and operations, their bytes in one room, build
// exactly what their clientv3 spellings build, whatever the room's size
// (a full room allocates afresh).
func TestOpRoomMatchesClientv3(t *testing.T) {
	const key, other = "/zlink/v1/spots/k", "/zlink/v1/stamp/1:4:game"
	value := []byte(`{"a":1}`)
	for _, size := range []int{0, 1, len(key), 2*len(key) + len(other)} {
		room := newOpRoom(newOpPrototypes(), size, 1)
		cmps := []struct {
			name      string
			got, want clientv3.Cmp
		}{
			{"mod revision equal", room.compare(pb.Compare_MOD, pb.Compare_EQUAL, room.bytes(key), 42), clientv3.Compare(clientv3.ModRevision(key), "=", 42)},
			{"mod revision below", room.compare(pb.Compare_MOD, pb.Compare_LESS, room.bytes(other), 7), clientv3.Compare(clientv3.ModRevision(other), "<", 7)},
			{"create revision equal", room.compare(pb.Compare_CREATE, pb.Compare_EQUAL, room.bytes(key), 9), clientv3.Compare(clientv3.CreateRevision(key), "=", 9)},
			{"absent", room.compare(pb.Compare_CREATE, pb.Compare_EQUAL, room.bytes(other), 0), clientv3.Compare(clientv3.CreateRevision(other), "=", 0)},
		}
		ops := []struct {
			name      string
			got, want clientv3.Op
		}{
			{"get", room.get(room.bytes(key)), clientv3.OpGet(key)},
			{"put", room.put(room.bytes(other), value), clientv3.OpPut(other, string(value))},
			{"put empty value", room.put(room.bytes(key), []byte{}), clientv3.OpPut(key, "")},
			{"delete", room.del(room.bytes(other)), clientv3.OpDelete(other)},
		}
		// Every compare keeps its own revision and key after the others
		// were built.
		for _, tc := range cmps {
			require.True(t, proto.Equal(tc.want.GetCompare(), tc.got.GetCompare()), "room %d, %s: got %v, want %v", size, tc.name, tc.got.GetCompare(), tc.want.GetCompare())
		}
		for _, tc := range ops {
			// Every field, the unexported ones included.
			require.Equal(t, tc.want, tc.got, "room %d, %s", size, tc.name)
		}
	}
}
