package txn

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/recorded"
)

// attemptLog records what Options.OnAttempt sees, errors dropped.
type attemptLog struct{ recorded.Log[Attempt] }

func (l *attemptLog) record(ctx context.Context, a Attempt) {
	a.Err = nil
	l.Add(a)
}

// OnAttempt sees every transaction an operation sends and how it ended.
func TestOnAttempt(t *testing.T) {
	type ctxKey struct{}
	tests := []struct {
		name string
		// run sets the fixture up and runs one operation named "op".
		run  func(t *testing.T, f *fixture, ctx context.Context)
		want []Attempt
	}{{
		name: "one commit",
		run: func(t *testing.T, f *fixture, ctx context.Context) {
			_, _, err := Run(ctx, f.e, "op", []string{f.key("k")}, setData(t, f.key("k"), "one", nil))
			require.NoError(t, err)
		},
		want: []Attempt{{Op: "op", Number: 1, Result: AttemptCommitted}},
	}, {
		name: "contention, then a commit",
		run: func(t *testing.T, f *fixture, ctx context.Context) {
			k := f.key("k")
			first := true
			_, _, err := Run(ctx, f.e, "op", []string{k}, func(v *View) (struct{}, Commit, error) {
				if first {
					first = false
					f.put(t, k, "concurrent")
				}
				return struct{}{}, Commit{Writes: []Write{Put(k, encodeDoc(t, "mine", v.Nonce()))}}, nil
			})
			require.NoError(t, err)
		},
		want: []Attempt{{Op: "op", Number: 1, Result: AttemptGuardFailed}, {Op: "op", Number: 2, Result: AttemptCommitted}},
	}, {
		name: "lost answer, applied",
		run: func(t *testing.T, f *fixture, ctx context.Context) {
			f.flaky.LoseNext(1, 0, nil)
			_, _, err := Run(ctx, f.e, "op", []string{f.key("k")}, setData(t, f.key("k"), "one", nil))
			require.NoError(t, err)
		},
		want: []Attempt{{Op: "op", Number: 1, Result: AttemptOutcomeUnknown, Resolution: ResolvedApplied}},
	}, {
		name: "lost answer, not applied, then a commit",
		run: func(t *testing.T, f *fixture, ctx context.Context) {
			f.put(t, f.key("k"), string(encodeDoc(t, "zero", "x")))
			f.flaky.LoseNext(0, 1, nil)
			_, _, err := Run(ctx, f.e, "op", []string{f.key("k")}, setData(t, f.key("k"), "one", nil))
			require.NoError(t, err)
		},
		want: []Attempt{
			{Op: "op", Number: 1, Result: AttemptOutcomeUnknown, Resolution: ResolvedNotApplied},
			{Op: "op", Number: 2, Result: AttemptCommitted},
		},
	}, {
		name: "lost answer, unresolved",
		run: func(t *testing.T, f *fixture, ctx context.Context) {
			k := f.key("k")
			f.flaky.LoseNext(1, 0, func() {
				rev := f.put(t, k, string(encodeDoc(t, "later", "z")))
				_, err := f.client.Compact(context.Background(), rev)
				require.NoError(t, err)
			})
			_, _, err := Run(ctx, f.e, "op", []string{k}, setData(t, k, "one", nil))
			require.ErrorIs(t, err, ErrOutcomeUnknown)
		},
		want: []Attempt{{Op: "op", Number: 1, Result: AttemptOutcomeUnknown, Resolution: ResolveGaveUp}},
	}, {
		name: "a cached read verified",
		run: func(t *testing.T, f *fixture, ctx context.Context) {
			k := f.key("k")
			_, _, err := Run(context.Background(), f.e, "setup", []string{k}, setData(t, k, "one", nil))
			require.NoError(t, err)
			_, _, err = Run(ctx, f.e, "op", []string{k}, func(v *View) (struct{}, Commit, error) {
				v.Get(k)
				return struct{}{}, Commit{}, nil
			})
			require.NoError(t, err)
		},
		want: []Attempt{{Op: "op", Number: 1, Verify: true, Result: AttemptVerified}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log attemptLog
			var foreign []string
			f := newFixture(t, Options{OnAttempt: func(ctx context.Context, a Attempt) {
				if ctx.Value(ctxKey{}) == nil {
					foreign = append(foreign, a.Op)
					return
				}
				log.record(ctx, a)
			}})
			tt.run(t, f, context.WithValue(t.Context(), ctxKey{}, true))
			require.Equal(t, tt.want, log.Take())
			require.Subset(t, []string{"setup"}, foreign, "every report of op carries op's context")
		})
	}
}
