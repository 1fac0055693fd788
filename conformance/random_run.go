package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"

	"github.com/zlink-systems/zlink-etcd/location"
)

// This file runs one random sequence on the model and on the store under
// test, and holds the state the operations share while they run.

// Rules a store can break, named in every failure report.
const (
	// ruleError: one store failed and the other did not, or the input
	// errors differ in class or code, or the sentinel errors differ.
	ruleError = "error"
	// ruleKind: the result kinds or statuses differ.
	ruleKind = "result-kind"
	// ruleField: a field, a list length or a presence differs.
	ruleField = "field"
	// ruleNumber: a number compared exactly differs (exact stores; 0,
	// negative and never-issued values everywhere).
	ruleNumber = RenameRuleNumber
	// ruleBijection: a renamed number broke the renaming.
	ruleBijection = RenameRuleBijection
	// ruleOrder: a renamed number broke the order of its namespace.
	ruleOrder = RenameRuleOrder
	// ruleToken: a continuation token is present on one store only (or,
	// on an exact store, differs).
	ruleToken = "token"
	// ruleStamp: a change stamp moved on one store only, or went back.
	ruleStamp = "stamp"
	// ruleHarness: a harness hook failed on one side.
	ruleHarness = "harness"
	// rulePanic: a store panicked.
	rulePanic = "panic"
)

// randomOp is one operation of a sequence: a store method (or a harness
// action) with symbolic arguments that are resolved when it runs, so that a
// shrunk sequence still makes sense.
type randomOp struct {
	// name is the store method or harness action.
	name string
	// args renders the symbolic arguments, readably (only for reports).
	args func() string
	// run performs the operation on both stores and compares.
	run func(x *runState)
}

// String renders the operation as it is listed in reports.
func (o randomOp) String() string { return o.name + "(" + o.args() + ")" }

// randomMismatch is the first broken rule of a sequence run.
type randomMismatch struct {
	OpIndex int
	Op      string
	Method  string
	Rule    string
	Detail  string
	// Input is the model-side arguments as resolved; Passed the renamed
	// numbers handed to the store under test instead of the model's.
	Input  string
	Passed []string
	// Model and Store are the two outcomes of the call that broke the rule.
	Model, Store string
}

// signature identifies a failure while shrinking: the same method breaking
// the same rule.
func (m *randomMismatch) signature() string { return m.Method + "\x00" + m.Rule }

// stampPair is the last reading of one change stamp on both stores.
type stampPair struct{ m, s int64 }

// runState is one sequence run: both fixtures, the renaming, what the model
// told so far, and the current operation's outcome.
type runState struct {
	ctx   context.Context
	caps  Capabilities
	model Fixture
	sut   Fixture
	names *Renamer
	know  *knowledge
	// stamps are the last readings per stamp scope.
	stamps map[string]stampPair
	// big is the oversized payload (bigPayload), shared by the run.
	big []byte

	// The current operation.
	mismatch           *randomMismatch
	input              []any
	passed             []string
	modelRes, storeRes any
	modelErr, storeErr error
}

// seqResult is the outcome of one sequence run.
type seqResult struct {
	// ran counts the operations run.
	ran      int
	mismatch *randomMismatch
	// outcomes counts the model's outcomes per method ("Reserve reserved").
	outcomes map[string]int
	// harness is set when no fixture could be built: nothing ran.
	harness error
}

// randomRun is what the sequences of one run share.
type randomRun struct {
	t TB
	h Harness
	// big is a payload over the 1 MiB limit, made once per run.
	big []byte
}

// newRandomRun returns the shared state of a run.
func newRandomRun(t TB, h Harness) *randomRun {
	return &randomRun{t: t, h: h, big: make([]byte, authMiB+1)}
}

// runSequence runs seq on a fresh model and a fresh fixture of the harness
// and stops at the first mismatch.
func (r *randomRun) runSequence(seed int64, seq []randomOp) seqResult {
	t, h := r.t, r.h
	t.Helper()
	model := newModelFixture(seed)
	sut, err := newFixture(t, h)
	if err != nil {
		return seqResult{harness: err}
	}
	model.Clock.Set(T0())
	x := &runState{
		ctx:    t.Context(),
		caps:   h.Capabilities,
		model:  model,
		sut:    sut,
		names:  NewRenamer(h.Capabilities.denseCounters()),
		know:   newKnowledge(),
		stamps: map[string]stampPair{},
		big:    r.big,
	}
	res := seqResult{outcomes: map[string]int{}}
	for i, op := range seq {
		res.ran++
		x.runOp(op)
		res.outcomes[op.name+" "+outcomeLabel(x.modelRes, x.modelErr)]++
		if x.mismatch != nil {
			x.mismatch.OpIndex = i
			x.mismatch.Op = op.String()
			x.mismatch.Method = op.name
			res.mismatch = x.mismatch
			return res
		}
	}
	return res
}

// runOp runs one operation, turning a panic into a mismatch.
func (x *runState) runOp(op randomOp) {
	x.mismatch, x.input, x.passed = nil, nil, nil
	x.modelRes, x.storeRes, x.modelErr, x.storeErr = nil, nil, nil, nil
	defer func() {
		if r := recover(); r != nil {
			x.mismatch = nil
			x.fail(rulePanic, "panic: %v\n%s", r, debug.Stack())
		}
	}()
	op.run(x)
}

// outcomeLabel names a model outcome for the coverage counts: the error
// code, the result's kind or status, or "ok".
func outcomeLabel(res any, err error) string {
	if err != nil {
		if ie, ok := location.AsInputError(err); ok {
			return "invalid:" + ie.Code
		}
		return "error"
	}
	v := reflect.ValueOf(res)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "nil"
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Struct:
		for _, f := range []string{"Kind", "Status"} {
			if fv := v.FieldByName(f); fv.IsValid() && fv.Kind() == reflect.String {
				return fv.String()
			}
		}
	}
	return "ok"
}

// fail records the first broken rule of the operation.
func (x *runState) fail(rule, format string, args ...any) {
	if x.mismatch != nil {
		return
	}
	m := &randomMismatch{Rule: rule, Detail: fmt.Sprintf(format, args...), Passed: append([]string(nil), x.passed...)}
	if x.input != nil {
		m.Input = renderArgs(x.input...)
	}
	m.Model = renderOutcome(x.modelRes, x.modelErr)
	m.Store = renderOutcome(x.storeRes, x.storeErr)
	x.mismatch = m
}

// ok reports whether the operation has broken no rule so far.
func (x *runState) ok() bool { return x.mismatch == nil }

// inputs records the model-side arguments for the report (rendered only
// when a rule breaks).
func (x *runState) inputs(args ...any) {
	x.input = args
}

// bigPayload returns a payload over the 1 MiB limit.
func (x *runState) bigPayload() []byte {
	if x.big == nil {
		x.big = make([]byte, authMiB+1)
	}
	return x.big
}

// side is one of the two stores inside a call: it translates the model's
// numbers into the store's.
type side struct {
	x       *runState
	store   location.Store
	fix     Fixture
	isStore bool
}

// note records a renamed number handed to the store under test.
func (sd side) note(what string, m, s any) {
	if sd.isStore && m != s {
		sd.x.passed = append(sd.x.passed, fmt.Sprintf("%s %v → %v", what, m, s))
	}
}

// translate returns the model's value m as the side passes it: m itself to
// the model, toStore(m) to the store under test (noted as what).
func translate[T any](sd side, what string, m T, toStore func(T) T) T {
	if !sd.isStore {
		return m
	}
	s := toStore(m)
	sd.note(what, m, s)
	return s
}

// lease translates an owner-lease generation.
func (sd side) lease(m int64) int64 {
	return translate(sd, "lease generation", m, func(m int64) int64 { return sd.x.names.ToStoreNumber(NSLease, m) })
}

// token translates an owner token.
func (sd side) token(t location.OwnerToken) location.OwnerToken {
	t.LeaseGeneration = sd.lease(t.LeaseGeneration)
	return t
}

// tokenPtr translates an optional owner token (a copy).
func (sd side) tokenPtr(t *location.OwnerToken) *location.OwnerToken {
	if t == nil {
		return nil
	}
	c := sd.token(*t)
	return &c
}

// rowGen translates a row generation of namespace ns.
func (sd side) rowGen(ns string, m int64) int64 {
	return translate(sd, "row generation", m, func(m int64) int64 { return sd.x.names.ToStoreNumber(ns, m) })
}

// version translates a store version of an authority key.
func (sd side) version(key location.AuthorityKey, m location.StoreVersion) location.StoreVersion {
	if !sd.isStore {
		return m
	}
	s := location.StoreVersion(sd.x.names.ToStoreText(NSVersion(string(key)), string(m)))
	sd.note("store version", fmt.Sprintf("%q", m), fmt.Sprintf("%q", s))
	return s
}

// reservation translates a creation reservation id.
func (sd side) reservation(m string) string {
	return translate(sd, "reservation id", m, func(m string) string { return sd.x.names.ToStoreText(NSReservation, m) })
}

// target translates a creation target's owner token.
func (sd side) target(t location.CreationTarget) location.CreationTarget {
	t.Owner = sd.token(t.Owner)
	return t
}

// both calls the model and the store under test with the same (translated)
// arguments and compares their errors. ok is true when both succeeded;
// when both failed alike the operation is over without a mismatch.
func both[R any](x *runState, call func(sd side) (R, error)) (m, s R, ok bool) {
	m, me := call(side{x: x, store: x.model.Store, fix: x.model})
	s, se := call(side{x: x, store: x.sut.Store, fix: x.sut, isStore: true})
	x.modelRes, x.storeRes, x.modelErr, x.storeErr = m, s, me, se
	return m, s, x.sameErrors(me, se)
}

// sentinelErrors are the error classes a store may report besides bad
// input; the two stores must agree on each.
func sentinelErrors() []error {
	return []error{
		location.ErrInternal, location.ErrTooLarge, location.ErrScanExpired,
		location.ErrUnsupported, location.ErrUnavailable, context.Canceled, context.DeadlineExceeded,
	}
}

// sameErrors compares the errors of one call and reports whether both
// stores succeeded.
func (x *runState) sameErrors(me, se error) bool {
	switch {
	case me == nil && se == nil:
		return true
	case me == nil:
		x.fail(ruleError, "the model succeeded, the store failed: %v", se)
		return false
	case se == nil:
		x.fail(ruleError, "the model failed (%v), the store succeeded", me)
		return false
	}
	mi, mIsInput := location.AsInputError(me)
	si, sIsInput := location.AsInputError(se)
	switch {
	case mIsInput != sIsInput:
		x.fail(ruleError, "model error %v, store error %v: only one is an invalid-argument error", me, se)
	case mIsInput && (mi.Class != si.Class || mi.Code != si.Code):
		x.fail(ruleError, "invalid argument (%s, %s) on the model, (%s, %s) on the store; model %v; store %v", mi.Code, mi.Class, si.Code, si.Class, me, se)
	case mIsInput && !errors.Is(se, location.ErrInvalidArgument):
		x.fail(ruleError, "store error %v does not wrap location.ErrInvalidArgument", se)
	default:
		for _, sentinel := range sentinelErrors() {
			if errors.Is(me, sentinel) != errors.Is(se, sentinel) {
				x.fail(ruleError, "model error %v, store error %v: they disagree on %v", me, se, sentinel)
				break
			}
		}
	}
	return false
}
