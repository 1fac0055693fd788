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
// PutBytes hands a value the caller already holds as bytes to the request
// as it is, where clientv3.OpPut would copy it from a string. Each returns
// exactly what its clientv3 spelling returns (TestOpsMatchClientv3).

// ModRevisionIs is clientv3.Compare(clientv3.ModRevision(key), "=", rev).
func ModRevisionIs(key string, rev int64) clientv3.Cmp {
	return revisionCompare(clientv3.ModRevision(key), pb.Compare_EQUAL, rev)
}

// ModRevisionBelow is clientv3.Compare(clientv3.ModRevision(key), "<", rev).
func ModRevisionBelow(key string, rev int64) clientv3.Cmp {
	return revisionCompare(clientv3.ModRevision(key), pb.Compare_LESS, rev)
}

// CreateRevisionIs is clientv3.Compare(clientv3.CreateRevision(key), "=",
// rev); rev 0 asserts that key does not exist.
func CreateRevisionIs(key string, rev int64) clientv3.Cmp {
	return revisionCompare(clientv3.CreateRevision(key), pb.Compare_EQUAL, rev)
}

// LeaseIs is clientv3.Compare(clientv3.LeaseValue(key), "=", id).
func LeaseIs(key string, id clientv3.LeaseID) clientv3.Cmp {
	c := clientv3.LeaseValue(key)
	pc := c.GetCompare()
	pc.Result = pb.Compare_EQUAL
	pc.TargetUnion = &pb.Compare_Lease{Lease: int64(id)}
	return c
}

// revisionCompare sets the result and the revision of c, a fresh compare
// of a ModRevision or a CreateRevision.
func revisionCompare(c clientv3.Cmp, result pb.Compare_CompareResult, rev int64) clientv3.Cmp {
	pc := c.GetCompare()
	pc.Result = result
	if pc.Target == pb.Compare_CREATE {
		pc.TargetUnion = &pb.Compare_CreateRevision{CreateRevision: rev}
	} else {
		pc.TargetUnion = &pb.Compare_ModRevision{ModRevision: rev}
	}
	return c
}

// PutBytes is clientv3.OpPut(key, string(value), opts...) without copying
// value: the request refers to value, which must not change afterwards (a
// Write's value never does).
func PutBytes(key string, value []byte, opts ...clientv3.OpOption) clientv3.Op {
	op := clientv3.OpPut(key, "", opts...)
	op.WithValueBytes(value)
	return op
}
