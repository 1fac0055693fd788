package txn

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Guarded is one conditional etcd transaction: compares, the writes sent
// when they all hold, and the keys read back when one does not. A decision's
// commit is one (Run builds it from the View), and so is every owner-lease
// write, which package leasemap builds itself. Send is the one place where
// such a transaction goes out and where its lost response is settled.
type Guarded struct {
	// If are the compares; Then the writes (puts and deletes), applied
	// only when every compare holds.
	If   []clientv3.Cmp
	Then []clientv3.Op
	// Read are the keys read back, one Get each, when a compare fails (the
	// transaction's Else branch); the resolution of a lost response reads
	// them too. Sent.Now holds them.
	Read []string

	// Nonce is the attempt's write nonce (NewNonce); Puts are the keys
	// whose value Then writes carries it. Without a put key, a lost
	// response can only be settled by the state (below).
	Nonce string
	Puts  []string
	// Deletes are the keys Then deletes; Absent the keys the compares
	// require to be absent.
	Deletes []string
	Absent  []string
	// Before are observations, made before the transaction was sent, of
	// keys it guards or writes (Run passes its View's).
	Before map[string]Observation
	// Earlier are the nonces of the operation's earlier attempts whose
	// response was lost and that were settled "not applied" at the time:
	// they may have landed since, and finding one applies that attempt.
	Earlier []string
	// SentAfter is a revision that was committed before the transaction
	// was sent: the history search of a lost response starts after it, and
	// a key required absent that exists since then proves the compare
	// failed.
	SentAfter int64
	// StateOnly settles a lost response by the keys' state alone: when no
	// key carries the nonce and nothing proves the outcome, the transaction
	// is taken as not applied, without searching the history. Only for a
	// caller that can afford the guess (a write that is harmless to send
	// again, or whose keys' layout proves more than Send knows).
	StateOnly bool

	// elseOps, when Engine.build sets them, are the Gets of Read (Send
	// makes them otherwise).
	elseOps []clientv3.Op
}

// Sent is how a Guarded transaction ended.
type Sent struct {
	// Applied reports that the transaction, or one of the Earlier attempts
	// (Nonce says which), was applied at Revision.
	Applied  bool
	Revision int64
	Nonce    string
	// Lost reports that the response was lost and settled by re-reading
	// (resolve). An attempt settled "not applied" may still land later, as
	// long as its compares hold: pass its nonce as Earlier to the next one.
	// Err is then the error that lost it.
	Lost bool
	Err  error
	// Now, when not applied, holds the Read keys at one revision: the Else
	// branch's reads, or those of the resolution (which also reads the
	// written keys).
	Now Observations
}

// Send sends one guarded transaction and, when its response is lost
// (IsAmbiguous), settles it by re-reading before it answers (decision
// E-9, resolve): it answers whether the transaction (or an Earlier
// attempt) was applied, never a guess unless StateOnly asks for one.
// Errors: one that proves nothing was applied wraps
// location.ErrUnavailable (or is the caller's context error, Unavailable);
// a resolution that fails wraps ErrOutcomeUnknown, the lost response's
// error and the resolution's own.
func (e *Engine) Send(ctx context.Context, op string, g Guarded) (Sent, error) {
	kv := e.kv
	if !allReadOnly(g.Then) {
		// A transaction that writes is sent once (Retrier.KV), so it skips
		// the Retrier's wrapper.
		kv = e.writeKV
	}
	gets := g.elseOps
	if len(gets) != len(g.Read) {
		gets = e.getsOf(g.Read)
	}
	resp, err := kv.Txn(ctx).If(g.If...).Then(g.Then...).Else(gets...).Commit()
	if err != nil {
		if !IsAmbiguous(err) {
			return Sent{}, Unavailable(op, err)
		}
		sent, rerr := e.resolve(ctx, g)
		if rerr != nil {
			return Sent{Lost: true, Err: err}, fmt.Errorf("%s: %w: %w (while resolving: %w)", op, ErrOutcomeUnknown, err, rerr)
		}
		sent.Lost, sent.Err = true, err
		if sent.Applied {
			e.log.Debug("txn: ambiguous commit was applied", "op", op, "revision", sent.Revision)
		} else {
			e.log.Debug("txn: ambiguous commit was not applied", "op", op, "error", err)
		}
		return sent, nil
	}
	e.NoteRevision(resp.Header.Revision)
	if resp.Succeeded {
		return Sent{Applied: true, Revision: resp.Header.Revision, Nonce: g.Nonce}, nil
	}
	now := e.elseObservations(g.Read, resp)
	// An earlier attempt may have landed since it was settled.
	if rev, nonce, ok := now.carrying(g.Nonce, g.Earlier); ok {
		return Sent{Applied: true, Revision: rev, Nonce: nonce}, nil
	}
	return Sent{Now: now}, nil
}

// carrying returns the ModRevision of an observation whose value carries
// one of the nonces, and that nonce.
func (obs Observations) carrying(nonce string, earlier []string) (rev int64, found string, ok bool) {
	for _, n := range append([]string{nonce}, earlier...) {
		for _, o := range obs.Keys {
			if o.HasNonce(n) {
				return o.ModRevision, n, true
			}
		}
	}
	return 0, "", false
}

// attempt describes the send of the attempt whose nonce is nonce as
// transaction number of operation op, for Options.OnAttempt; err is Send's
// error.
func (s Sent) attempt(op string, number int, nonce string, err error) Attempt {
	a := Attempt{Op: op, Number: number}
	switch {
	case s.Lost:
		a.Result, a.Err, a.Resolution = AttemptOutcomeUnknown, s.Err, resolution(s.Applied, err)
		// The resolution found an earlier attempt applied, late.
		a.EarlierApplied = s.Applied && s.Nonce != nonce
	case err != nil:
		a.Result, a.Err = AttemptFailed, err
	case s.Applied && s.Nonce == nonce:
		a.Result = AttemptCommitted
	default:
		// The compares failed, because of an earlier attempt that landed
		// late (Applied) or of contention.
		a.Result, a.EarlierApplied = AttemptGuardFailed, s.Applied
	}
	return a
}
