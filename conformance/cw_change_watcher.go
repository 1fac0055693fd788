package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Change watchers (CW-…, a suite-only namespace defined in
// docs/decisions.md): what location.ChangeWatcher promises. Auto-connect
// reconciles at once when a watcher reports a change, so a watcher that
// misses a table or the end of a lease leaves a node connected to a peer
// that is gone until the next poll. The scenarios run on stores that
// implement location.ChangeWatcher and skip themselves on the others.
//
// Each step opens a fresh watcher after the scenario's setup, so that only
// the step's own change can satisfy it, and waits at most the harness's
// NotifyTimeout. A notification may be spurious (the contract allows it), so
// the scenarios never require silence.

// cwTable is one location table and a write and a removal of its fixture
// row by owner-a.
type cwTable struct {
	table location.Table
	// put stores the fixture row owned by tok (a NewClaim).
	put func(l *lsCase, tok location.OwnerToken) location.WriteResult
	// byRowGeneration: the row is removed with its row generation in the
	// token's place of the lease generation (peers, routes).
	byRowGeneration bool
	// rm removes the fixture row with the token rm.
	rm func(l *lsCase, rm location.OwnerToken) location.WriteStatus
}

// write stores the row owned by tok, requires it stored and returns the
// token that removes it.
func (t cwTable) write(l *lsCase, tok location.OwnerToken) location.OwnerToken {
	l.Helper()
	res := t.put(l, tok)
	require.Equalf(l, location.Stored, res.Status, "update of %s: result %+v", t.table, res)
	if t.byRowGeneration {
		return fixture.Token(tok.OwnerID, res.Generation)
	}
	return tok
}

// remove removes the row with the token write returned and requires it
// removed.
func (t cwTable) remove(l *lsCase, rm location.OwnerToken) {
	l.Helper()
	require.Equalf(l, location.Stored, t.rm(l, rm), "removal of %s", t.table)
}

// cwTables lists the seven location tables in the order of
// rules.LocationTables(), which is the order of their scenarios.
func cwTables() []cwTable {
	type (
		owner  = location.OwnerToken
		result = location.WriteResult
		status = location.WriteStatus
	)
	claim := location.IntentNewClaim
	ops := []cwTable{
		{table: location.TableMeshNodes,
			put: func(l *lsCase, tok owner) result { return l.putMN(fixture.MN(tok), claim) },
			rm:  func(l *lsCase, rm owner) status { return l.rmMN(fixture.MNKey(), rm) }},
		{table: location.TableClientServers,
			put: func(l *lsCase, tok owner) result { return l.putCS(fixture.CS(tok), claim) },
			rm:  func(l *lsCase, rm owner) status { return l.rmCS(fixture.CSKey(), rm) }},
		{table: location.TableFanoutPublishers,
			put: func(l *lsCase, tok owner) result { return l.putFP(fixture.FP(tok), claim) },
			rm:  func(l *lsCase, rm owner) status { return l.rmFP(fixture.FPKey(), rm) }},
		{table: location.TablePeers, byRowGeneration: true,
			put: func(l *lsCase, tok owner) result { return l.putPeer(fixture.PEER(tok.OwnerID, 0), claim) },
			rm:  func(l *lsCase, rm owner) status { return l.rmPeer(fixture.PeerKey(), rm).Status }},
		{table: location.TableSpots,
			put: func(l *lsCase, tok owner) result {
				return l.putSpot(fixture.SPOT(tok.OwnerID, tok.LeaseGeneration), claim)
			},
			rm: func(l *lsCase, rm owner) status { return l.rmSpot(fixture.SpotKey(), rm) }},
		{table: location.TableActors,
			put: func(l *lsCase, tok owner) result {
				return l.putActor(fixture.ACTOR(tok.OwnerID, tok.LeaseGeneration), claim)
			},
			rm: func(l *lsCase, rm owner) status { return l.rmActor(fixture.ActorKey(), rm) }},
		{table: location.TableRoutes, byRowGeneration: true,
			put: func(l *lsCase, tok owner) result { return l.putRoute(fixture.ROUTE(tok.OwnerID, 0), claim) },
			rm:  func(l *lsCase, rm owner) status { return l.rmRoute(fixture.RouteKey(), rm).Status }},
	}
	var out []cwTable
	for _, t := range rules.LocationTables() {
		i := slices.IndexFunc(ops, func(o cwTable) bool { return o.table == t })
		out = append(out, ops[i])
	}
	return out
}

// cwScenarios returns the CW scenarios.
func cwScenarios() []Scenario {
	const section = "CW Change watcher"
	var out []Scenario
	for i, t := range cwTables() {
		out = append(out, Scenario{
			ID: fmt.Sprintf("CW-%03d", i+1), Section: section,
			Title: fmt.Sprintf("A watcher of %s is notified of a write and of a removal", t.table),
			Run:   cwRun(func(l *lsCase, w location.ChangeWatcher) { cwTableWrites(l, w, t) }),
		})
	}
	return append(out,
		Scenario{ID: "CW-008", Section: section, Title: "A watcher of no table in particular is notified for every table", Run: cwRun(cw008)},
		Scenario{ID: "CW-009", Section: section, Title: "A released lease is notified", Run: cwRun(cw009)},
		Scenario{ID: "CW-010", Section: section, Title: "An expired lease is notified", Run: cwRun(cw010)},
		Scenario{ID: "CW-011", Section: section, Title: "RemoveAllByOwner is notified", Run: cwRun(cw011)},
		Scenario{ID: "CW-012", Section: section, Title: "The channel closes when the context ends", Run: cwRun(cw012)},
		Scenario{ID: "CW-013", Section: section, Title: "A done context is an error", Run: cwRun(cw013)},
	)
}

// cwRun adapts a CW scenario body: it skips the scenario when the store is
// not a location.ChangeWatcher.
func cwRun(body func(l *lsCase, w location.ChangeWatcher)) func(c *Case) {
	return lsRun(func(l *lsCase) {
		w, ok := l.S.(location.ChangeWatcher)
		if !ok {
			l.Skipf("the store does not implement location.ChangeWatcher (an optional capability)")
			return
		}
		body(l, w)
	})
}

// watch opens a watcher of tables (every table when none is given) for one
// step; it is closed when the scenario ends or when the returned cancel is
// called.
func (l *lsCase) watch(w location.ChangeWatcher, tables ...location.Table) (<-chan struct{}, context.CancelFunc) {
	l.Helper()
	ctx, cancel := context.WithCancel(l.Ctx)
	l.Cleanup(cancel)
	ch, err := w.WatchChanges(ctx, tables...)
	require.NoErrorf(l, err, "WatchChanges(%v)", tables)
	require.NotNilf(l, ch, "WatchChanges(%v) returned no channel", tables)
	return ch, cancel
}

// expectNotified waits for a notification on ch.
func (l *lsCase) expectNotified(ch <-chan struct{}, format string, args ...any) {
	l.Helper()
	what := fmt.Sprintf(format, args...)
	deadline := time.NewTimer(l.NotifyTimeout)
	defer deadline.Stop()
	require.Truef(l, l.receive(ch, deadline.C, what+": no notification"), "%s: the watcher's channel was closed instead of notified", what)
}

// expectClosed waits for ch to be closed, taking any notification on the
// way.
func (l *lsCase) expectClosed(ch <-chan struct{}, what string) {
	l.Helper()
	deadline := time.NewTimer(l.NotifyTimeout)
	defer deadline.Stop()
	for l.receive(ch, deadline.C, what+": the channel was not closed") {
	}
}

// receive waits for a notification or the close of ch and reports whether
// ch is still open; at the deadline it fails the scenario with late.
func (l *lsCase) receive(ch <-chan struct{}, deadline <-chan time.Time, late string) (open bool) {
	l.Helper()
	select {
	case _, open = <-ch:
		return open
	case <-deadline:
		l.Fatalf("%s within %s", late, l.NotifyTimeout)
	case <-l.Ctx.Done():
		l.Fatalf("%s: the scenario ended while waiting", late)
	}
	return false
}

// cwTableWrites is CW-001 … CW-007: a watcher of the table is notified of a
// NewClaim write of a row and of its removal.
func cwTableWrites(l *lsCase, w location.ChangeWatcher, t cwTable) {
	tok := l.claim("owner-a")
	ch, cancel := l.watch(w, t.table)
	rm := t.write(l, tok)
	l.expectNotified(ch, "a write of %s", t.table)
	cancel()
	ch, _ = l.watch(w, t.table)
	t.remove(l, rm)
	l.expectNotified(ch, "a removal from %s", t.table)
}

// cw008 is CW-008: WatchChanges with no table watches every location table.
func cw008(l *lsCase, w location.ChangeWatcher) {
	tok := l.claim("owner-a")
	for _, t := range cwTables() {
		ch, cancel := l.watch(w)
		t.write(l, tok)
		l.expectNotified(ch, "a write of %s, watching every table", t.table)
		cancel()
	}
}

// cw009 is CW-009: releasing a lease changes the liveness of its owner's
// rows (the fanout list hides them), so a watcher of a location table is
// notified.
func cw009(l *lsCase, w location.ChangeWatcher) {
	cwLeaseEnds(l, w, "release", func() { l.release("owner-a") })
}

// cw010 is CW-010: a lease the harness expires is notified as a release is.
func cw010(l *lsCase, w location.ChangeWatcher) {
	cwLeaseEnds(l, w, "expiry", func() { l.expire("owner-a") })
}

// cwLeaseEnds ends owner-a's lease, which holds a fanout publisher row, by
// end, and requires a watcher of the fanout table to be notified.
func cwLeaseEnds(l *lsCase, w location.ChangeWatcher, how string, end func()) {
	tok := l.claim("owner-a")
	require.Equal(l, location.Stored, l.putFP(fixture.FP(tok), location.IntentNewClaim).Status)
	ch, _ := l.watch(w, location.TableFanoutPublishers)
	end()
	l.expectNotified(ch, "the %s of owner-a's lease", how)
	require.Emptyf(l, l.listFP("events"), "after the %s the owner's publisher is no longer listed", how)
}

// cw011 is CW-011: RemoveAllByOwner removes rows, and the watchers of their
// tables are notified.
func cw011(l *lsCase, w location.ChangeWatcher) {
	tok := l.claim("owner-a")
	require.Equal(l, location.Stored, l.putSpot(fixture.SPOT("owner-a", tok.LeaseGeneration), location.IntentNewClaim).Status)
	require.Equal(l, location.Stored, l.putRoute(fixture.ROUTE("owner-a", 0), location.IntentNewClaim).Status)
	spots, _ := l.watch(w, location.TableSpots)
	routes, _ := l.watch(w, location.TableRoutes)
	require.Equal(l, int64(2), l.removeAll(tok))
	l.expectNotified(spots, "RemoveAllByOwner, watching spots")
	l.expectNotified(routes, "RemoveAllByOwner, watching routes")
}

// cw012 is CW-012: the channel is closed once its context ends, so that the
// receiver's loop ends and nothing leaks.
func cw012(l *lsCase, w location.ChangeWatcher) {
	ch, cancel := l.watch(w, location.TablePeers)
	cancel()
	l.expectClosed(ch, "after its context was cancelled")
}

// cw013 is CW-013: WatchChanges with a done context answers the context's
// error and no channel.
func cw013(l *lsCase, w location.ChangeWatcher) {
	ctx, cancel := context.WithCancel(l.Ctx)
	cancel()
	ch, err := w.WatchChanges(ctx, location.TableSpots)
	require.Errorf(l, err, "WatchChanges with a cancelled context")
	require.Truef(l, errors.Is(err, context.Canceled), "the error %v does not wrap context.Canceled", err)
	require.Nil(l, ch, "no channel with the error")
}
