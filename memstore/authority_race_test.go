package memstore

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// auRaceRounds is how often each [race] scenario runs.
const auRaceRounds = 50

// auBoth runs a and b in two goroutines released together and returns their
// results.
func auBoth[A, B any](t *testing.T, a func() (A, error), b func() (B, error)) (A, B) {
	t.Helper()
	var (
		ra         A
		rb         B
		errA, errB error
		wg         sync.WaitGroup
	)
	start := make(chan struct{})
	wg.Add(2)
	go func() { defer wg.Done(); <-start; ra, errA = a() }()
	go func() { defer wg.Done(); <-start; rb, errB = b() }()
	close(start)
	wg.Wait()
	require.NoError(t, errA)
	require.NoError(t, errB)
	return ra, rb
}

// auRounds runs one [race] scenario auRaceRounds times on fresh fixtures.
func auRounds(t *testing.T, opts []auOpt, round func(f *auFix)) {
	for i := range auRaceRounds {
		t.Run(fmt.Sprint(i), func(t *testing.T) { round(newAuFix(t, opts...)) })
	}
}

// auKinds sorts two result kinds for order-free comparison.
func auKinds(a, b location.ResultKind) [2]location.ResultKind {
	if a > b {
		a, b = b, a
	}
	return [2]location.ResultKind{a, b}
}

func TestAuthorityConcurrency(t *testing.T) {
	t.Run("AUTH-198_two_preserves_one_version", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			s := f.AS("w1", auTarget(f.NA))
			cas := func(p string) func() (location.CompareExchangeResult, error) {
				return func() (location.CompareExchangeResult, error) {
					return f.s.CompareExchangeAuthority(f.ctx, auKS("w1"), s.StoreVersion, auPreserve(p))
				}
			}
			a, b := auBoth(f.t, cas("a"), cas("b"))
			require.Equal(f.t, auKinds(location.KindConflict, location.KindStored), auKinds(a.Kind, b.Kind))
			win, lose := a, b
			if a.Kind == location.KindConflict {
				win, lose = b, a
			}
			require.Equal(f.t, win.Stored.StoreVersion, lose.Current.Snapshot.StoreVersion)
		})
	})
	t.Run("AUTH-199_preserve_vs_delete", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			s := f.AS("w1b", auTarget(f.NA))
			p, d := auBoth(f.t,
				func() (location.CompareExchangeResult, error) {
					return f.s.CompareExchangeAuthority(f.ctx, auKS("w1b"), s.StoreVersion, auPreserve("p"))
				},
				func() (location.CompareExchangeResult, error) {
					return f.s.CompareExchangeAuthority(f.ctx, auKS("w1b"), s.StoreVersion, auDelete())
				})
			if d.Kind == location.KindDeleted {
				require.Equal(f.t, location.KindConflict, p.Kind)
				require.Equal(f.t, location.KindMissing, p.Current.Kind)
			} else {
				require.Equal(f.t, location.KindStored, p.Kind)
				require.Equal(f.t, location.KindConflict, d.Kind)
			}
		})
	})
	t.Run("AUTH-200_no_lost_update", func(t *testing.T) {
		f := newAuFix(t)
		f.AS("w2", auTarget(f.NA))
		const writers = 16
		versions := make([][]location.StoreVersion, writers)
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		start := make(chan struct{})
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				tag := fmt.Sprintf("<%02d>", i)
				for {
					r, err := f.s.ReadAuthority(f.ctx, auKS("w2"))
					if err != nil {
						errs <- err
						return
					}
					res, err := f.s.CompareExchangeAuthority(f.ctx, auKS("w2"), r.Snapshot.StoreVersion,
						auPreserve(string(r.Snapshot.Payload)+tag))
					if err != nil {
						errs <- err
						return
					}
					if res.Kind == location.KindStored {
						versions[i] = append(versions[i], res.Stored.StoreVersion)
						return
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		final := f.current(auKS("w2")).Payload
		seen := map[location.StoreVersion]bool{}
		for i := range writers {
			require.Equal(t, 1, bytes.Count(final, fmt.Appendf(nil, "<%02d>", i)), "tag %d", i)
			require.Len(t, versions[i], 1)
			require.False(t, seen[versions[i][0]])
			seen[versions[i][0]] = true
		}
	})
	t.Run("AUTH-201_two_reserves_one_key", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			rs := func() (location.ReserveResult, error) {
				return f.s.Reserve(f.ctx, auReserveReq(location.ObjectUserSpot, "w0", "room", auTarget(f.NA), auVS("room", 1)))
			}
			a, b := auBoth(f.t, rs, rs)
			require.Equal(f.t, auKinds(location.KindConflict, location.KindReserved), auKinds(a.Kind, b.Kind))
			lose := a
			if a.Kind == location.KindReserved {
				lose = b
			}
			require.Equal(f.t, location.AllocationReserved, lose.Current.Snapshot.Allocation.State)
			require.Equal(f.t, auSpots(0, 1), f.U(f.NA))
		})
	})
	t.Run("AUTH-202_two_reserves_last_slot", func(t *testing.T) {
		auRounds(t, []auOpt{auNALimits(auLimits{10, 1, 10, 10, 10})}, func(f *auFix) {
			rs := func(id string) func() (location.ReserveResult, error) {
				return func() (location.ReserveResult, error) {
					return f.s.Reserve(f.ctx, auReserveReq(location.ObjectUserSpot, id, "room", auTarget(f.NA), auVS("room", 1)))
				}
			}
			a, b := auBoth(f.t, rs("w3"), rs("w4"))
			require.Equal(f.t, auKinds(location.KindPlacementCapacityExhausted, location.KindReserved), auKinds(a.Kind, b.Kind))
		})
	})
	t.Run("AUTH-203_commit_vs_abort", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			r := f.RS("w6", auTarget(f.NA))
			c, a := auBoth(f.t,
				func() (location.CommitResult, error) { return f.s.Commit(f.ctx, auCommitReq("w6", r, auTarget(f.NA))) },
				func() (location.ResultKind, error) {
					return f.s.AbortCreation(f.ctx, auAbortReq(location.ObjectUserSpot, "w6", r, auTarget(f.NA)))
				})
			if c.Kind == location.KindCommitted {
				require.Equal(f.t, location.KindStale, a)
				require.Equal(f.t, auSpots(1, 0), f.U(f.NA))
			} else {
				require.Equal(f.t, location.KindStale, c.Kind)
				require.Equal(f.t, location.KindAborted, a)
				require.Equal(f.t, auUsage{}, f.U(f.NA))
			}
		})
	})
	t.Run("AUTH-204_two_commits", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			r := f.RS("w7", auTarget(f.NA))
			c := func() (location.CommitResult, error) { return f.s.Commit(f.ctx, auCommitReq("w7", r, auTarget(f.NA))) }
			a, b := auBoth(f.t, c, c)
			require.Equal(f.t, auKinds(location.KindAlreadyCommitted, location.KindCommitted), auKinds(a.Kind, b.Kind))
			require.Equal(f.t, auSpots(1, 0), f.U(f.NA))
		})
	})
	t.Run("AUTH-205_two_identical_completions", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			r := f.RA("w8", auTarget(f.NA))
			c := func() (location.CompleteCreationResult, error) {
				return f.s.CompleteCreation(f.ctx, auCompleteReq("w8", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(40), auT0().Add(time.Minute))))
			}
			a, b := auBoth(f.t, c, c)
			require.Equal(f.t, auKinds(location.KindAlreadyCompleted, location.KindCreated), auKinds(a.Kind, b.Kind))
			require.Equal(f.t, auUsage{Actors: auEntry{1, 0}}, f.U(f.NA))
		})
	})
	t.Run("AUTH-206_two_completions_different_operations", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			r := f.RA("w9", auTarget(f.NA))
			c := func(n uint64) func() (location.CompleteCreationResult, error) {
				return func() (location.CompleteCreationResult, error) {
					return f.s.CompleteCreation(f.ctx, auCompleteReq("w9", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(n), auT0().Add(time.Minute))))
				}
			}
			a, b := auBoth(f.t, c(41), c(42))
			require.Equal(f.t, auKinds(location.KindCreated, location.KindStale), auKinds(a.Kind, b.Kind))
			winner, loser := auOP(41), auOP(42)
			if b.Kind == location.KindCreated {
				winner, loser = loser, winner
			}
			require.Equal(f.t, location.KindFound, f.readTerminal(winner).Kind)
			require.Equal(f.t, location.KindMissing, f.readTerminal(loser).Kind)
		})
	})
	t.Run("AUTH-207_completion_vs_abort", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			r := f.RA("w10", auTarget(f.NA))
			c, a := auBoth(f.t,
				func() (location.CompleteCreationResult, error) {
					return f.s.CompleteCreation(f.ctx, auCompleteReq("w10", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(43), auT0().Add(time.Minute))))
				},
				func() (location.ResultKind, error) {
					return f.s.AbortCreation(f.ctx, auAbortReq(location.ObjectActor, "w10", r, auTarget(f.NA)))
				})
			if c.Kind == location.KindCreated {
				require.Equal(f.t, location.KindStale, a)
			} else {
				require.Equal(f.t, location.KindStale, c.Kind)
				require.Equal(f.t, location.KindAborted, a)
			}
		})
	})
	t.Run("AUTH-208_identical_relocation_reservations", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			s := f.AS("w11", auTarget(f.NA))
			rel := func() (location.RelocationReserveResult, error) {
				return f.s.ReserveRelocationCapacity(f.ctx, auRelReq("Rw", auKS("w11"), s, f.NA, f.NB, auVS("room", 1)))
			}
			a, b := auBoth(f.t, rel, rel)
			require.Equal(f.t, auKinds(location.KindAlreadyReserved, location.KindReserved), auKinds(a.Kind, b.Kind))
			require.Equal(f.t, auSpots(0, 1), f.U(f.NB))
		})
	})
	t.Run("AUTH-209_relocation_reservations_last_slot", func(t *testing.T) {
		auRounds(t, []auOpt{auNBLimits(auLimits{10, 1, 10, 10, 10})}, func(f *auFix) {
			sx, sy := f.AS("wx", auTarget(f.NA)), f.AS("wy", auTarget(f.NA))
			rel := func(id, key string, s location.AuthoritySnapshot) func() (location.RelocationReserveResult, error) {
				return func() (location.RelocationReserveResult, error) {
					return f.s.ReserveRelocationCapacity(f.ctx, auRelReq(id, auKS(key), s, f.NA, f.NB, auVS("room", 1)))
				}
			}
			a, b := auBoth(f.t, rel("Rx", "wx", sx), rel("Ry", "wy", sy))
			require.Equal(f.t, auKinds(location.KindPlacementCapacityExhausted, location.KindReserved), auKinds(a.Kind, b.Kind))
		})
	})
	t.Run("AUTH-210_newOwner_vs_preserve", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			s := f.AS("w12", auTarget(f.NA))
			f.REL(auRelReq("Rp", auKS("w12"), s, f.NA, f.NB, auVS("room", 1)))
			m, p := auBoth(f.t,
				func() (location.CompareExchangeResult, error) {
					return f.s.CompareExchangeAuthority(f.ctx, auKS("w12"), s.StoreVersion, auNewOwner(f.B, "Rp", "m"))
				},
				func() (location.CompareExchangeResult, error) {
					return f.s.CompareExchangeAuthority(f.ctx, auKS("w12"), s.StoreVersion, auPreserve("p"))
				})
			require.Equal(f.t, auKinds(location.KindConflict, location.KindStored), auKinds(m.Kind, p.Kind))
			if p.Kind == location.KindStored {
				require.Equal(f.t, location.KindAborted, f.abortRel("Rp"))
			} else {
				require.Equal(f.t, location.KindAlreadyCommitted, f.abortRel("Rp"))
			}
		})
	})
	t.Run("AUTH-211_newOwner_vs_abortRelocationCapacity", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			s := f.AS("w13", auTarget(f.NA))
			f.REL(auRelReq("Rq", auKS("w13"), s, f.NA, f.NB, auVS("room", 1)))
			m, a := auBoth(f.t,
				func() (location.CompareExchangeResult, error) {
					return f.s.CompareExchangeAuthority(f.ctx, auKS("w13"), s.StoreVersion, auNewOwner(f.B, "Rq", "m"))
				},
				func() (location.ResultKind, error) { return f.s.AbortRelocationCapacity(f.ctx, "Rq") })
			if m.Kind == location.KindStored {
				require.Equal(f.t, location.KindAlreadyCommitted, a)
				require.Equal(f.t, auSpots(1, 0), f.U(f.NB))
			} else {
				require.Equal(f.t, location.KindConflict, m.Kind)
				require.Equal(f.t, location.KindAborted, a)
				require.Equal(f.t, auUsage{}, f.U(f.NB))
				require.Equal(f.t, auSpots(1, 0), f.U(f.NA))
			}
		})
	})
	// prepared is AUTH-156 on a fresh fixture.
	prepared := func(f *auFix) (location.AuthoritySnapshot, location.AggregatePrepareRequest) {
		s1, s2 := f.AS("g1", auTarget(f.NA)), f.AS("g2", auTarget(f.NA))
		req := f.aggReq("AG1", 1, auVS("room", 2),
			auPart{auKS("g1"), s1.StoreVersion, location.TransitionNewOwner},
			auPart{auKS("g2"), s2.StoreVersion, location.TransitionNewOwner})
		return s1, req
	}
	t.Run("AUTH-212_two_identical_prepares", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			_, req := prepared(f)
			p := func() (location.AggregatePrepareResult, error) { return f.s.PrepareAggregate(f.ctx, req) }
			a, b := auBoth(f.t, p, p)
			require.Equal(f.t, auKinds(location.KindAlreadyPrepared, location.KindPrepared), auKinds(a.Kind, b.Kind))
			require.Equal(f.t, auSpots(0, 2), f.U(f.NB))
		})
	})
	t.Run("AUTH-213_commit_vs_abort_of_an_aggregate", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			_, req := prepared(f)
			f.prepare(req)
			c, a := auBoth(f.t,
				func() (location.ResultKind, error) { return f.s.CommitAggregate(f.ctx, auFence("AG1", 1)) },
				func() (location.ResultKind, error) { return f.s.AbortAggregate(f.ctx, auFence("AG1", 1)) })
			if c == location.KindCommitted {
				require.Equal(f.t, location.KindStale, a)
				require.Equal(f.t, auSpots(2, 0), f.U(f.NB))
			} else {
				require.Equal(f.t, location.KindStale, c)
				require.Equal(f.t, location.KindAborted, a)
				require.Equal(f.t, auUsage{}, f.U(f.NB))
			}
		})
	})
	t.Run("AUTH-214_aggregate_commit_vs_participant_cas", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			s1, req := prepared(f)
			f.prepare(req)
			c, p := auBoth(f.t,
				func() (location.ResultKind, error) { return f.s.CommitAggregate(f.ctx, auFence("AG1", 1)) },
				func() (location.CompareExchangeResult, error) {
					return f.s.CompareExchangeAuthority(f.ctx, auKS("g1"), s1.StoreVersion, auPreserve("p"))
				})
			if c == location.KindCommitted {
				require.Equal(f.t, location.KindConflict, p.Kind)
			} else {
				require.Equal(f.t, location.KindStale, c)
				require.Equal(f.t, location.KindStored, p.Kind)
			}
		})
	})
	t.Run("AUTH-215_two_aggregate_commits", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			_, req := prepared(f)
			f.prepare(req)
			c := func() (location.ResultKind, error) { return f.s.CommitAggregate(f.ctx, auFence("AG1", 1)) }
			a, b := auBoth(f.t, c, c)
			require.Equal(f.t, auKinds(location.KindAlreadyCommitted, location.KindCommitted), auKinds(a, b))
			require.Equal(f.t, auSpots(2, 0), f.U(f.NB))
			require.Equal(f.t, int64(3), f.current(auKS("g1")).AuthorityOwnerGeneration, "moved once")
		})
	})
	t.Run("AUTH-216_removeAllByOwner_vs_commit", func(t *testing.T) {
		auRounds(t, nil, func(f *auFix) {
			r := f.RS("w5", auTarget(f.NA))
			_, c := auBoth(f.t,
				func() (int64, error) { return f.s.RemoveAllByOwner(f.ctx, f.A) },
				func() (location.CommitResult, error) { return f.s.Commit(f.ctx, auCommitReq("w5", r, auTarget(f.NA))) })
			require.Contains(f.t, []location.ResultKind{location.KindCommitted, location.KindStale}, c.Kind)
			require.Equal(f.t, f.missing(), f.read(auKS("w5")))
			f.publish(f.NA, location.IntentNewClaim)
			require.Equal(f.t, auUsage{}, f.U(f.NA))
		})
	})
}
