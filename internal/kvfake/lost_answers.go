package kvfake

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrAnswerLost is what a transaction whose answer was lost gets by
// default: the timeout etcd answers, which does not say whether the
// transaction applied.
var ErrAnswerLost = status.Error(codes.Unavailable, "etcdserver: request timed out (test: the answer was lost)")

// ErrRefused is what a read refused by a fake gets: an error that is not
// transient, so that a resolution cannot ride it out.
var ErrRefused = status.Error(codes.PermissionDenied, "etcdserver: permission denied (test: reads refused)")

// LoseAnswer answers a transaction as if its answer was lost: send commits
// it first unless unsent, then meanwhile runs (when set), and the caller
// gets err (ErrAnswerLost when nil).
func LoseAnswer(send func() (*clientv3.TxnResponse, error), unsent bool, meanwhile func(), err error) (*clientv3.TxnResponse, error) {
	if !unsent {
		if _, err := send(); err != nil {
			return nil, err
		}
	}
	if meanwhile != nil {
		meanwhile()
	}
	if err == nil {
		err = ErrAnswerLost
	}
	return nil, err
}

// LostAnswers loses the answers of chosen write transactions under a
// client's KV (see LoseNext); reads, and the writes not chosen, pass. The
// zero value with KV set passes everything.
type LostAnswers struct {
	clientv3.KV
	// Err is what a lost answer gets; nil means ErrAnswerLost.
	Err error

	mu        sync.Mutex
	applied   int
	unsent    int
	meanwhile func()
}

// LoseNext loses the answers of the next write transactions: the first
// applied ones after they were applied, then the next unsent ones without
// sending them. meanwhile (when set) runs before each lost answer is
// returned (a concurrent change, an election).
func (l *LostAnswers) LoseNext(applied, unsent int, meanwhile func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applied, l.unsent, l.meanwhile = applied, unsent, meanwhile
}

// LoseOne loses the answer of the next write transaction: after it
// applied when applied is set, else without sending it; meanwhile (when
// set) runs before the lost answer is returned.
func (l *LostAnswers) LoseOne(applied bool, meanwhile func()) {
	if applied {
		l.LoseNext(1, 0, meanwhile)
	} else {
		l.LoseNext(0, 1, meanwhile)
	}
}

// take returns whether to lose the next write's answer, and how.
func (l *LostAnswers) take() (lose, unsent bool, meanwhile func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.applied > 0:
		l.applied--
		return true, false, l.meanwhile
	case l.unsent > 0:
		l.unsent--
		return true, true, l.meanwhile
	}
	return false, false, nil
}

// Txn returns a transaction of the wrapped KV whose answer, if it writes
// and LoseNext chose it, is lost.
func (l *LostAnswers) Txn(ctx context.Context) clientv3.Txn {
	return newHookedTxn(l.KV.Txn(ctx), func(ops Ops, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error) {
		if !ops.Writes() {
			return send()
		}
		lose, unsent, meanwhile := l.take()
		if !lose {
			return send()
		}
		return LoseAnswer(send, unsent, meanwhile, l.Err)
	})
}
