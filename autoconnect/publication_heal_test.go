package autoconnect

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// Self-healing publication (issue 12, finding 1): a claim whose answer was
// lost, or a row left by an earlier incarnation of the owner, must not leave
// the node unpublished.

// errLostResponse is what a store call answers when the write was applied
// but its answer did not come back (an etcd leader lost mid-request).
const errLostResponse = testError("the write was applied but its answer was lost")

// lossyPublisher is a memstore whose next `lose` UpdatePeer calls are applied
// and then answered with errLostResponse. It logs every write as
// "<intent>:<status the store gave>" and counts ListPeers calls.
type lossyPublisher struct {
	*memstore.Store

	mu     sync.Mutex
	lose   int
	writes []string
	reads  int
}

// UpdatePeer implements PeerWriter.
func (p *lossyPublisher) UpdatePeer(ctx context.Context, row location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	res, err := p.Store.UpdatePeer(ctx, row, intent)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes = append(p.writes, fmt.Sprintf("%s:%s", intent, res.Status))
	if err == nil && p.lose > 0 {
		p.lose--
		return location.WriteResult{}, errLostResponse
	}
	return res, err
}

// ListPeers implements PeerLister.
func (p *lossyPublisher) ListPeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	p.mu.Lock()
	p.reads++
	p.mu.Unlock()
	return p.Store.ListPeers(ctx, f)
}

// log returns the writes and the number of reads so far.
func (p *lossyPublisher) log() ([]string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.writes...), p.reads
}

// healFix is a reconciler of node-a (owner "oa", endpoint tcp://a:1) that
// publishes through a lossyPublisher over a memstore and lists the peer
// table; owner "ob" publishes node-b.
type healFix struct {
	*memFix
	pub *lossyPublisher
	r   *Reconciler
}

// newHealFix claims oa and ob, publishes node-b's row and builds node-a's
// reconciler (it has not ticked yet). Logs go to logger (nil discards).
func newHealFix(t *testing.T, logger *slog.Logger) *healFix {
	f := &healFix{memFix: newMemFix(t)}
	f.claim("oa")
	f.claim("ob")
	res, err := f.store.UpdatePeer(f.ctx, router("ob", "node-b", "tcp://b:1"), location.IntentNewClaim)
	require.NoError(t, err)
	require.Equal(t, location.Stored, res.Status)
	f.pub = &lossyPublisher{Store: f.store}
	f.r = f.reconciler(t, logger)
	return f
}

// reconciler builds a new reconciler of node-a over the fixture's store
// (a restarted process).
func (f *healFix) reconciler(t *testing.T, logger *slog.Logger) *Reconciler {
	if logger == nil {
		logger = discardLogger()
	}
	src, err := NewPeerRowSource(f.store, f.lt)
	require.NoError(t, err)
	lr := router("oa", "node-a", "tcp://a:1")
	r, err := NewReconciler(ReconcilerOptions{
		Local: local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"), LocalRow: &lr,
		Publisher: f.pub, Source: src, Executor: wrapFull(newFakeExec(&recorder{})), Clock: f.mono, Logger: logger,
	})
	require.NoError(t, err)
	return r
}

// tick runs one tick of the fixture's reconciler.
func (f *healFix) tick() {
	f.t.Helper()
	require.NoError(f.t, f.r.Tick(f.ctx))
}

// localRow returns the stored row of node-a, or nil.
func (f *healFix) localRow() *location.PeerLocation {
	f.t.Helper()
	for _, row := range f.peerRows() {
		if row.NodeRID != nil && *row.NodeRID == "node-a" {
			return &row
		}
	}
	return nil
}

func TestPublicationSelfHealing(t *testing.T) {
	t.Run("lost_claim_answer", func(t *testing.T) {
		f := newHealFix(t, nil)
		f.pub.lose = 1
		f.tick()
		require.True(t, f.r.StoreFailed(), "the lost answer is a store failure")
		require.False(t, f.r.LocalPublicationReady())
		require.NotNil(t, f.localRow(), "the claim was applied")

		f.tick()
		require.True(t, f.r.LocalPublicationReady(), "published on the next tick")
		require.False(t, f.r.StoreFailed())
		writes, reads := f.pub.log()
		require.Equal(t, []string{"NewClaim:stored", "NewClaim:rejectedConflict", "Renew:stored"}, writes)
		require.Equal(t, 1, reads, "one read learnt the generation")

		// The learnt generation is the stored one: shutdown removes the row.
		require.NoError(t, f.r.Shutdown(f.ctx))
		require.Nil(t, f.localRow())
		require.Equal(t, []string{"ob"}, ownersOfRows(f.peerRows()))
	})

	t.Run("lost_reclaim_answer", func(t *testing.T) {
		// Published under generation 1; the row vanishes (a restarted
		// store); the re-claim is applied (generation 2) but its answer is
		// lost. The remembered generation 1 names the row no more.
		f := newHealFix(t, nil)
		f.tick()
		require.True(t, f.r.LocalPublicationReady())
		_, err := f.store.RemovePeer(f.ctx, location.PeerKey{
			AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter, NodeRID: rid("node-a"),
		}, location.OwnerToken{OwnerID: "oa", LeaseGeneration: 1})
		require.NoError(t, err)
		f.pub.lose = 1
		f.tick()
		require.True(t, f.r.StoreFailed())
		require.Equal(t, int64(2), f.localRow().Generation)

		f.tick()
		require.True(t, f.r.LocalPublicationReady())
		require.False(t, f.r.StoreFailed())
		writes, _ := f.pub.log()
		require.Equal(t, []string{"NewClaim:stored", "NewClaim:stored", "NewClaim:rejectedConflict", "Renew:stored"}, writes)
		require.NoError(t, f.r.Shutdown(f.ctx))
		require.Nil(t, f.localRow(), "removed with generation 2")
	})

	t.Run("conflict_after_restart", func(t *testing.T) {
		// An earlier process of owner oa published node-a (at another
		// endpoint) and ended; oa claimed a new lease and starts again.
		f := newHealFix(t, nil)
		old := router("oa", "node-a", "tcp://old:1")
		res, err := f.store.UpdatePeer(f.ctx, old, location.IntentNewClaim)
		require.NoError(t, err)
		require.Equal(t, location.Stored, res.Status)
		_, err = f.store.ReleaseOwnerLease(f.ctx, f.tok["oa"])
		require.NoError(t, err)
		renewed := f.claim("oa")
		require.NotEqual(t, res.Generation, int64(0))
		require.Greater(t, renewed.LeaseGeneration, int64(1), "a new incarnation of oa")

		f.tick()
		require.True(t, f.r.LocalPublicationReady(), "the row of the earlier incarnation is adopted")
		require.False(t, f.r.StoreFailed())
		writes, reads := f.pub.log()
		require.Equal(t, []string{"NewClaim:rejectedConflict", "Renew:stored"}, writes)
		require.Equal(t, 1, reads)
		row := f.localRow()
		require.Equal(t, "tcp://a:1", row.Endpoint, "the row now describes this process")
		require.Equal(t, res.Generation, row.Generation, "renewed, not replaced")
		require.NoError(t, f.r.Shutdown(f.ctx))
		require.Nil(t, f.localRow())
	})

	t.Run("another_owner_holds_the_row", func(t *testing.T) {
		logs := &logCapture{}
		f := newHealFix(t, slog.New(logs))
		f.claim("oz")
		res, err := f.store.UpdatePeer(f.ctx, router("oz", "node-a", "tcp://z:1"), location.IntentNewClaim)
		require.NoError(t, err)
		require.Equal(t, location.Stored, res.Status)

		warnings := func() int {
			return len(logs.at(slog.LevelWarn, "autoconnect: local peer row not published"))
		}
		f.tick()
		require.False(t, f.r.LocalPublicationReady())
		require.False(t, f.r.StoreFailed(), "a rejected publication is not a store failure")
		require.Zero(t, warnings(), "one rejection may be a lost race")
		f.mono.AdvanceMs(1000)
		f.tick()
		require.Equal(t, 1, warnings(), "a repeated rejection warns")
		w := logs.at(slog.LevelWarn, "autoconnect: local peer row not published")[0]
		require.Equal(t, "oz", w.attrs["holder"])
		require.Equal(t, "2", w.attrs["rejected_attempts"])
		require.Contains(t, w.attrs["reason"], "stop one of them")
		for range 29 {
			f.mono.AdvanceMs(1000)
			f.tick()
		}
		require.Equal(t, 1, warnings(), "rate-limited")
		f.mono.AdvanceMs(1000)
		f.tick()
		require.Equal(t, 2, warnings(), "again after the warning interval")
		writes, _ := f.pub.log()
		require.Len(t, writes, 32, "one claim per tick, no renewal of another owner's row")

		// oz goes away: the next claim wins.
		_, err = f.store.ReleaseOwnerLease(f.ctx, f.tok["oz"])
		require.NoError(t, err)
		f.tick()
		require.True(t, f.r.LocalPublicationReady())
		require.Len(t, logs.at(slog.LevelInfo, "autoconnect: local peer row published"), 1)
	})
}

// TestPublicationResolution drives the publication's resolution of lost
// answers with scripted store answers: published under generation 5, a
// failed listing then resets the publication.
func TestPublicationResolution(t *testing.T) {
	own := router("oa", "node-a", "tcp://a")
	peerB := router("ob", "node-b", "tcp://b")
	publishedThenFailed := func(t *testing.T) *harness {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(own, peerB)
		h.tick()
		h.src.fail(errStoreDown)
		h.tick()
		require.False(t, h.r.LocalPublicationReady())
		h.src.set(own, peerB)
		h.rec.reset()
		return h
	}
	unavailable := fmt.Errorf("etcd down: %w", location.ErrUnavailable)

	cases := []struct {
		name  string
		claim error // when set, the answer of a claim in a tick before (a store failure)
		write []writeAnswer
		read  []readAnswer
		// calls are the publisher calls of the last tick.
		calls     []string
		published bool
		failed    bool
		removed   string
	}{{
		name: "unavailable_keeps_the_generation", claim: unavailable,
		write: []writeAnswer{conflict(), stored(5)},
		calls: []string{"write:NewClaim:1", "write:Renew:5"}, published: true, removed: "remove:tcp://a:5",
	}, {
		name: "ambiguous_error_forgets_the_generation", claim: errLostResponse,
		write: []writeAnswer{conflict(), stored(7)},
		read:  []readAnswer{{rows: []location.PeerLocation{router("oa", "node-a", "tcp://a", gen(7))}}},
		calls: []string{"write:NewClaim:1", "read:node-a", "write:Renew:7"}, published: true, removed: "remove:tcp://a:7",
	}, {
		name:  "stale_renewal_reads_the_row",
		write: []writeAnswer{conflict(), staleAnswer(), stored(6)},
		read:  []readAnswer{{rows: []location.PeerLocation{router("oa", "node-a", "tcp://a", gen(6))}}},
		calls: []string{"write:NewClaim:1", "write:Renew:5", "read:node-a", "write:Renew:6"}, published: true, removed: "remove:tcp://a:6",
	}, {
		name: "row_of_another_owner", claim: errLostResponse,
		write: []writeAnswer{conflict()},
		read:  []readAnswer{{rows: []location.PeerLocation{router("ob", "node-a", "tcp://x", gen(3)), router("oa", "node-a", "tcp://a", gen(9), mesh("other"))}}},
		calls: []string{"write:NewClaim:1", "read:node-a"},
	}, {
		name: "row_gone", claim: errLostResponse,
		write: []writeAnswer{conflict()},
		calls: []string{"write:NewClaim:1", "read:node-a"},
	}, {
		name: "read_error_is_a_store_failure", claim: errLostResponse,
		write: []writeAnswer{conflict()},
		read:  []readAnswer{{err: errStoreDown}},
		calls: []string{"write:NewClaim:1", "read:node-a"}, failed: true,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := publishedThenFailed(t)
			if c.claim != nil {
				h.pub.queueWrite(failed(c.claim))
				h.tick()
			}
			h.pub.queueWrite(c.write...)
			h.pub.queueRead(c.read...)
			h.rec.reset()
			h.tick()
			require.Equal(t, c.calls, h.rec.only("write", "read"))
			require.Equal(t, c.published, h.r.LocalPublicationReady())
			require.Equal(t, c.failed, h.r.StoreFailed())
			if c.read != nil || c.name == "row_gone" {
				f := h.pub.readFilters[len(h.pub.readFilters)-1]
				require.Equal(t, location.AutoConnectRouteMesh, *f.AutoConnectType)
				require.Equal(t, testMesh, *f.MeshName)
				require.Equal(t, location.PeerRoleRouter, *f.Role)
				require.Equal(t, rid("node-a"), f.NodeRID)
				require.Nil(t, f.Endpoint, "a row with a routing id is found by it")
			}
			h.rec.reset()
			require.NoError(t, h.r.Shutdown(context.Background()))
			if c.removed == "" {
				require.Empty(t, h.rec.only("remove"))
			} else {
				require.Equal(t, []string{c.removed}, h.rec.only("remove"))
			}
		})
	}

	t.Run("rid_less_row_is_read_by_endpoint", func(t *testing.T) {
		lr := router("oa", "", "tcp://a")
		l := local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "", "tcp://a")
		h := newHarness(t, harnessConfig{local: &l, localRow: &lr})
		h.src.set(lr)
		h.pub.queueWrite(conflict(), stored(4))
		h.pub.queueRead(readAnswer{rows: []location.PeerLocation{router("oa", "", "tcp://a", gen(4))}})
		h.tick()
		require.True(t, h.r.LocalPublicationReady())
		f := h.pub.readFilters[0]
		require.Nil(t, f.NodeRID)
		require.Equal(t, "tcp://a", *f.Endpoint)
	})
}

// logCapture is a slog.Handler that keeps every record.
type logCapture struct {
	mu      sync.Mutex
	records []capturedLog
}

// capturedLog is one record: level, message and attributes as text.
type capturedLog struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// Enabled implements slog.Handler.
func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := capturedLog{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, rec)
	return nil
}

// WithAttrs implements slog.Handler (the attributes are dropped).
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }

// WithGroup implements slog.Handler (the group is dropped).
func (c *logCapture) WithGroup(string) slog.Handler { return c }

// at returns the records of level with message msg.
func (c *logCapture) at(level slog.Level, msg string) []capturedLog {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []capturedLog
	for _, r := range c.records {
		if r.level == level && r.msg == msg {
			out = append(out, r)
		}
	}
	return out
}
