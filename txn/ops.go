package txn

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The compares and puts of the store's transactions, built as clientv3
// builds them, minus copies. clientv3.Compare copies the compare it is
// given with proto.Clone (reflection: about a microsecond, and the largest
// single cost of building a guard) before setting its result and value;
// these start from a fresh compare of their own, which needs no copy.
// Each returns exactly what its clientv3 spelling returns
// (TestOpsMatchClientv3).

// ModRevisionIs is clientv3.Compare(clientv3.ModRevision(key), "=", rev).
func ModRevisionIs(key string, rev int64) clientv3.Cmp {
	return compareOf(pb.Compare_MOD, pb.Compare_EQUAL, key, rev)
}

// ModRevisionBelow is clientv3.Compare(clientv3.ModRevision(key), "<", rev).
func ModRevisionBelow(key string, rev int64) clientv3.Cmp {
	return compareOf(pb.Compare_MOD, pb.Compare_LESS, key, rev)
}

// CreateRevisionIs is clientv3.Compare(clientv3.CreateRevision(key), "=",
// rev); rev 0 asserts that key does not exist.
func CreateRevisionIs(key string, rev int64) clientv3.Cmp {
	return compareOf(pb.Compare_CREATE, pb.Compare_EQUAL, key, rev)
}

// compareOf is one compare of its own room (opRoom.compare).
func compareOf(target pb.Compare_CompareTarget, result pb.Compare_CompareResult, key string, rev int64) clientv3.Cmp {
	room := newOpRoom(nil, len(key), 1)
	return room.compare(target, result, room.bytes(key), rev)
}

// LeaseIs is clientv3.Compare(clientv3.LeaseValue(key), "=", id).
func LeaseIs(key string, id clientv3.LeaseID) clientv3.Cmp {
	c := clientv3.LeaseValue(key)
	pc := c.GetCompare()
	pc.Result = pb.Compare_EQUAL
	pc.TargetUnion = &pb.Compare_Lease{Lease: int64(id)}
	return c
}

// opRoom builds the compares and operations of one transaction with few
// allocations (the engine's own transactions: Engine.build, verify, the
// Gets of Send): the bytes of every key, and of the nonce that every
// touched key's value carries, are copied into one buffer sized up front,
// where clientv3 copies each key on its own (and OpGet and OpDelete make a
// throwaway Op besides); the revisions of the compares share one
// allocation too. What it builds equals what the clientv3 spellings build
// (TestOpRoomMatchesClientv3). Its bytes are never modified once handed
// out, so the compares and operations of one transaction may share them;
// every transaction has a room of its own (a KV may keep the requests it
// was given).
type opRoom struct {
	protos *opPrototypes
	buf    []byte
	revs   []revisionUnion
}

// opPrototypes are an Op of each kind with an empty key, made once per
// engine and copied for each operation.
type opPrototypes struct {
	get, put, del clientv3.Op
}

func newOpPrototypes() *opPrototypes {
	return &opPrototypes{get: clientv3.OpGet(""), put: clientv3.OpPut("", ""), del: clientv3.OpDelete("")}
}

// revisionUnion is room for the revision of one compare.
type revisionUnion struct {
	mod    pb.Compare_ModRevision
	create pb.Compare_CreateRevision
}

// newOpRoom returns a room for keys of keyBytes bytes in all and for
// compares revision compares.
func newOpRoom(protos *opPrototypes, keyBytes, compares int) opRoom {
	r := opRoom{protos: protos, buf: make([]byte, 0, keyBytes)}
	if compares > 0 {
		r.revs = make([]revisionUnion, 0, compares)
	}
	return r
}

// bytes returns a copy of s in the room (a fresh allocation when the room
// is full). Appending to the copy never touches the room.
func (r *opRoom) bytes(s string) []byte {
	start := len(r.buf)
	r.buf = append(r.buf, s...)
	return r.buf[start:len(r.buf):len(r.buf)]
}

// get is clientv3.OpGet(key).
func (r *opRoom) get(key []byte) clientv3.Op {
	op := r.protos.get
	op.WithKeyBytes(key)
	return op
}

// put is clientv3.OpPut(string(key), string(value)) without copying
// value: the request refers to value, which must not change afterwards (a
// Write's value never does).
func (r *opRoom) put(key, value []byte) clientv3.Op {
	op := r.protos.put
	op.WithKeyBytes(key)
	op.WithValueBytes(value)
	return op
}

// del is clientv3.OpDelete(key).
func (r *opRoom) del(key []byte) clientv3.Op {
	op := r.protos.del
	op.WithKeyBytes(key)
	return op
}

// compare is ModRevisionIs, ModRevisionBelow or CreateRevisionIs
// (target pb.Compare_MOD or pb.Compare_CREATE, result EQUAL or LESS) of
// key.
func (r *opRoom) compare(target pb.Compare_CompareTarget, result pb.Compare_CompareResult, key []byte, rev int64) clientv3.Cmp {
	var c clientv3.Cmp
	if target == pb.Compare_CREATE {
		c = clientv3.CreateRevision("")
	} else {
		c = clientv3.ModRevision("")
	}
	c.WithKeyBytes(key)
	pc := c.GetCompare()
	pc.Result = result
	r.revs = append(r.revs, revisionUnion{})
	u := &r.revs[len(r.revs)-1]
	if target == pb.Compare_CREATE {
		u.create.CreateRevision = rev
		pc.TargetUnion = &u.create
	} else {
		u.mod.ModRevision = rev
		pc.TargetUnion = &u.mod
	}
	return c
}
