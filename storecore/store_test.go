package storecore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// recorder is an Observer that records what it sees.
type recorder struct {
	mu     sync.Mutex
	starts []storecore.Op
	ends   []ended
}

type ended struct {
	op    storecore.Op
	out   storecore.Outcome
	value any // the context value Start set
}

type ctxKey struct{}

func (r *recorder) Start(ctx context.Context, op storecore.Op) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, op)
	return context.WithValue(ctx, ctxKey{}, op.Name)
}

func (r *recorder) End(ctx context.Context, op storecore.Op, out storecore.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends = append(r.ends, ended{op: op, out: out, value: ctx.Value(ctxKey{})})
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts, r.ends = nil, nil
}

// Every method of the store interfaces (and the expiry hook) is one
// observed operation named after the method: Start once, End once, End with
// the context Start returned.
func TestEveryMethodIsObservedOnce(t *testing.T) {
	obs := &recorder{}
	s := memstore.New(memstore.Options{Clock: clock.NewManual(time.UnixMilli(1_782_950_400_000)).Now, Observer: obs})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var methods []reflect.Method
	for _, iface := range []reflect.Type{
		reflect.TypeFor[location.Store](), reflect.TypeFor[location.ChangeWatcher](),
		reflect.TypeFor[location.MeshNodeChangeStamper](), reflect.TypeFor[location.OwnerLivenessReader](),
	} {
		for i := range iface.NumMethod() {
			methods = append(methods, iface.Method(i))
		}
	}
	methods = append(methods, reflect.Method{Name: "ExpireOwnerLease"})
	require.Len(t, methods, 53)
	v := reflect.ValueOf(s)
	for _, m := range methods {
		t.Run(m.Name, func(t *testing.T) {
			obs.reset()
			fn := v.MethodByName(m.Name)
			args := []reflect.Value{reflect.ValueOf(ctx)}
			for i := 1; i < fn.Type().NumIn(); i++ {
				if fn.Type().IsVariadic() && i == fn.Type().NumIn()-1 {
					break
				}
				args = append(args, reflect.Zero(fn.Type().In(i)))
			}
			fn.Call(args)
			require.Len(t, obs.starts, 1)
			require.Len(t, obs.ends, 1)
			require.Equal(t, m.Name, obs.starts[0].Name)
			require.Equal(t, obs.starts[0], obs.ends[0].op)
			require.Equal(t, m.Name, obs.ends[0].value, "End gets the context Start returned")
		})
	}
}

// The steps run in order: a done context is reported before validation,
// bad input before the backend, and the Observer sees the result kind and
// the error class.
func TestStepsAndOutcomes(t *testing.T) {
	obs := &recorder{}
	clk := clock.NewManual(time.UnixMilli(1_782_950_400_000))
	s := memstore.New(memstore.Options{Clock: clk.Now, Observer: obs})
	ctx := t.Context()

	claim, err := s.ClaimOwnerLease(ctx, "a", time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindClaimed, claim.Kind)
	require.Equal(t, "claimed", obs.ends[0].out.Kind())
	require.Equal(t, storecore.ClassNone, storecore.ErrorClass(obs.ends[0].out.Err))

	obs.reset()
	_, err = s.ClaimOwnerLease(ctx, "", 0)
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	ie, ok := location.AsInputError(err)
	require.True(t, ok)
	require.Equal(t, location.CodeLeaseOwnerID, ie.Code, "the owner id is checked before the TTL")
	require.EqualError(t, err, "memstore: ClaimOwnerLease: "+ie.Error())
	require.Equal(t, storecore.ClassInvalidArgument, storecore.ErrorClass(obs.ends[0].out.Err))
	require.Empty(t, obs.ends[0].out.Kind())

	obs.reset()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.ClaimOwnerLease(canceled, "", 0)
	require.ErrorIs(t, err, context.Canceled, "the context comes before validation")
	require.EqualError(t, err, "memstore: ClaimOwnerLease: context canceled")
	require.Equal(t, storecore.ClassCanceled, storecore.ErrorClass(obs.ends[0].out.Err))

	obs.reset()
	res, err := s.RemoveSpot(ctx, location.SpotKey{MeshName: "m", SpotID: "s"}, claim.Token)
	require.NoError(t, err)
	require.Equal(t, storecore.Op{Name: "RemoveSpot", Table: location.TableSpots}, obs.ends[0].op)
	require.Equal(t, string(res), obs.ends[0].out.Kind())
	require.Equal(t, res, obs.ends[0].out.Result)
	require.GreaterOrEqual(t, obs.ends[0].out.Elapsed, time.Duration(0))
}

func TestOutcomeKind(t *testing.T) {
	for _, c := range []struct {
		result any
		want   string
	}{
		{location.KindStale, "stale"},
		{location.Stored, "stored"},
		{location.WriteResult{Status: location.IgnoredStale}, "ignoredStale"},
		{location.CompareExchangeResult{Kind: location.KindConflict}, "conflict"},
		{location.OwnerLeaseReadResult{Kind: location.KindMissing}, "missing"},
		{location.Page[location.SpotLocation]{}, ""},
		{int64(3), ""},
		{(*location.SpotLocation)(nil), ""},
		{nil, ""},
	} {
		require.Equal(t, c.want, storecore.Outcome{Result: c.result}.Kind(), "%#v", c.result)
	}
	require.Empty(t, storecore.Outcome{Result: location.KindStale, Err: errors.New("x")}.Kind())
}

func TestErrorClass(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                       storecore.ClassNone,
		fmt.Errorf("x: %w", context.Canceled):     storecore.ClassCanceled,
		context.DeadlineExceeded:                  storecore.ClassDeadlineExceeded,
		location.NewTypeError("c", "m"):           storecore.ClassInvalidArgument,
		fmt.Errorf("%w", location.ErrTooLarge):    storecore.ClassTooLarge,
		location.ErrScanExpired:                   storecore.ClassScanExpired,
		location.ErrUnsupported:                   storecore.ClassUnsupported,
		fmt.Errorf("%w", location.ErrUnavailable): storecore.ClassUnavailable,
		location.ErrInternal:                      storecore.ClassInternal,
		errors.New("other"):                       storecore.ClassOther,
	} {
		require.Equal(t, want, storecore.ErrorClass(err), "%v", err)
	}
}

// A backend error that names the operation already is not named again.
func TestErrorsNameTheOperationOnce(t *testing.T) {
	b := &failing{err: errors.New("RemoveAllByOwner: gave up")}
	s := storecore.New(b, storecore.Options{})
	_, err := s.RemoveAllByOwner(t.Context(), location.OwnerToken{})
	require.EqualError(t, err, "fake: RemoveAllByOwner: gave up")
	require.ErrorIs(t, err, b.err)
	b.err = errors.New("gave up")
	_, err = s.RemoveAllByOwner(t.Context(), location.OwnerToken{})
	require.EqualError(t, err, "fake: RemoveAllByOwner: gave up")
}

// Bad input never reaches the backend; a decision reaches it once, with its
// read set, and answers with the result of the decision's last run.
func TestDecideValidatesThenRunsTheBackend(t *testing.T) {
	b := &failing{runs: 3}
	s := storecore.New(b, storecore.Options{})
	_, err := s.ReadAuthority(t.Context(), "zla1:bad")
	require.ErrorIs(t, err, location.ErrInvalidArgument, "validated before the backend")
	require.Zero(t, b.calls)
	key, err := location.EncodeAuthorityKey(location.ObjectUserSpot, "g")
	require.NoError(t, err)
	res, err := s.ReadAuthority(t.Context(), key)
	require.NoError(t, err)
	require.Equal(t, location.KindMissing, res.Kind)
	require.Equal(t, 1, b.calls)
	require.Equal(t, []storecore.Ref{storecore.Row(rules.TableAuthority, string(key))}, b.reads.Refs)
}

// failing is a Backend whose reads fail with err and whose Decide runs the
// decision runs times over an empty state.
type failing struct {
	storecore.Backend // unused methods panic
	err               error
	runs, calls       int
	reads             storecore.ReadSet
}

func (f *failing) Name() string { return "fake" }

func (f *failing) RemoveOwned(context.Context, location.OwnerToken) (int64, error) { return 0, f.err }

func (f *failing) Decide(_ context.Context, c *storecore.Call) error {
	f.calls++
	f.reads, _ = c.Reads(func(rules.Table, string) (rules.Record, bool) { return rules.Record{}, false })
	for range f.runs {
		if err := c.Run(rules.NewTx(emptySource{})); err != nil {
			return err
		}
	}
	return nil
}

// emptySource is a rules.Source over nothing.
type emptySource struct{}

func (emptySource) Now() time.Time                                    { return time.UnixMilli(0).UTC() }
func (emptySource) Get(rules.Table, string) (rules.Record, bool)      { return rules.Record{}, false }
func (emptySource) LiveLease(string) (int64, bool)                    { return 0, false }
func (emptySource) NextGeneration(rules.Table, string) int64          { return 1 }
func (emptySource) CanIssue(int64, int64, int64) bool                 { return true }
func (emptySource) IssueVersion() location.StoreVersion               { return "1" }
func (emptySource) IssueObjectGeneration(location.AuthorityKey) int64 { return 1 }
func (emptySource) IssueOwnerGeneration(location.AuthorityKey) int64  { return 1 }
func (emptySource) NewReservationID() string                          { return "id" }
