package txn

import "context"

// Attempt describes one transaction an operation sent: a commit, or the
// verification of a decision that writes nothing (Options.OnAttempt).
type Attempt struct {
	// Op names the operation, as given to Run.
	Op string
	// Number counts the operation's transactions, from 1.
	Number int
	// Verify reports a transaction that only checked that what a decision
	// writing nothing had read still held.
	Verify bool
	// Result is how the transaction ended.
	Result AttemptResult
	// Resolution is how a lost answer was resolved by re-reading (Result
	// AttemptOutcomeUnknown); "" otherwise.
	Resolution Resolution
	// EarlierApplied reports that the guards failed because an earlier
	// transaction of the operation, whose lost answer had been resolved as
	// not applied, was applied after all (late): its result is the
	// operation's.
	EarlierApplied bool
	// Err is the etcd error of a failed transaction or of one whose answer
	// was lost; nil otherwise.
	Err error
}

// AttemptResult is how one transaction ended.
type AttemptResult string

// Attempt results.
const (
	// AttemptCommitted: the commit was applied.
	AttemptCommitted AttemptResult = "committed"
	// AttemptVerified: what a decision writing nothing had read still held.
	AttemptVerified AttemptResult = "verified"
	// AttemptGuardFailed: what the decision read had changed since
	// (contention); it decides again on the values the transaction
	// returned.
	AttemptGuardFailed AttemptResult = "guard_failed"
	// AttemptFailed: etcd refused the transaction or it failed before
	// reaching etcd; nothing was applied.
	AttemptFailed AttemptResult = "failed"
	// AttemptOutcomeUnknown: the answer was lost (deadline, broken
	// connection); Resolution says what re-reading found.
	AttemptOutcomeUnknown AttemptResult = "outcome_unknown"
)

// Resolution is what re-reading found about a transaction whose answer
// was lost.
type Resolution string

// Resolutions.
const (
	// ResolvedApplied: the transaction was applied.
	ResolvedApplied Resolution = "applied"
	// ResolvedNotApplied: it was not (yet) applied; the decision runs
	// again.
	ResolvedNotApplied Resolution = "not_applied"
	// ResolveGaveUp: re-reading could not tell before its time ran out; the
	// operation fails with ErrOutcomeUnknown.
	ResolveGaveUp Resolution = "gave_up"
)

// report calls Options.OnAttempt.
func (e *Engine) report(ctx context.Context, a Attempt) {
	if e.onAttempt != nil {
		e.onAttempt(ctx, a)
	}
}

// resolution names what resolve found.
func resolution(applied bool, err error) Resolution {
	switch {
	case err != nil:
		return ResolveGaveUp
	case applied:
		return ResolvedApplied
	}
	return ResolvedNotApplied
}
