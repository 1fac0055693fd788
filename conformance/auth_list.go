package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section J of the authority catalogue: listAuthorities (04 §2.3, as changed
// by 00-decisions E-10: byte order, and an unusable cursor answers
// scanExpired).

// list calls ListAuthorities and requires no error; every listed snapshot's
// storeNow is the clock.
func (e *authEnv) list(prefix, cursor string, limit int) location.AuthorityScanResult {
	e.c.Helper()
	r, err := e.c.S.ListAuthorities(e.c.Ctx, prefix, cursor, limit)
	require.NoError(e.c, err, "listAuthorities(%q, cursor %d bytes, %d)", prefix, len(cursor), limit)
	if r.Kind == location.KindPage {
		for _, it := range r.Items {
			require.Equal(e.c, e.now(), it.Snapshot.StoreNow, "listed storeNow of %s", it.Key)
		}
	} else {
		require.Equal(e.c, location.KindScanExpired, r.Kind)
		require.Empty(e.c, r.Items)
	}
	return r
}

// listPage requires a page.
func (e *authEnv) listPage(prefix, cursor string, limit int) location.AuthorityScanResult {
	e.c.Helper()
	r := e.list(prefix, cursor, limit)
	require.Equal(e.c, location.KindPage, r.Kind, "listAuthorities(%q)", prefix)
	return r
}

// authListedKeys returns the keys of a page.
func authListedKeys(items []location.AuthorityEntry) []location.AuthorityKey {
	out := make([]location.AuthorityKey, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

// auth062 AUTH-062 Limit validation.
func auth062(c *Case) {
	e := newAuthEnv(c)
	e.AS("l0", e.TA())
	for _, n := range []int{0, -1, 1001} {
		e.requireInvalid(fmt.Sprintf("list with limit %d", n), location.ClassRange, location.CodeAuthorityScanLimit, func() error { return errOf(c.S.ListAuthorities(c.Ctx, "zla1:", "", n)) })
	}
	e.listPage("zla1:", "", 1)
	e.listPage("zla1:", "", 1000)
}

// auth063 AUTH-063 Empty store.
func auth063(c *Case) {
	e := newAuthEnv(c)
	r := e.listPage("zla1:", "", 10)
	require.Empty(c, r.Items)
	require.Empty(c, r.NextCursor)
}

// auth064Setup is AUTH-064's data: actors x1..x3 (AA) and spots y1, y2 (AS).
func (e *authEnv) auth064Setup() {
	e.c.Helper()
	for i, id := range []string{"x1", "x2", "x3"} {
		e.AA(id, e.TA(), uint64(i+1))
	}
	e.AS("y1", e.TA())
	e.AS("y2", e.TA())
}

// auth064 AUTH-064 Prefix filter.
func auth064(c *Case) {
	e := newAuthEnv(c)
	e.auth064Setup()
	a := e.listPage("zla1:a:", "", 10)
	require.Equal(c, []location.AuthorityKey{fixture.KA("x1"), fixture.KA("x2"), fixture.KA("x3")}, authListedKeys(a.Items))
	require.Empty(c, a.NextCursor)
	s := e.listPage("zla1:s:", "", 10)
	require.Equal(c, []location.AuthorityKey{fixture.KS("y1"), fixture.KS("y2")}, authListedKeys(s.Items))
	require.Empty(c, s.NextCursor)
}

// auth065 AUTH-065 Empty prefix.
func auth065(c *Case) {
	e := newAuthEnv(c)
	e.auth064Setup()
	r := e.listPage("", "", 10)
	require.Equal(c, []location.AuthorityKey{fixture.KA("x1"), fixture.KA("x2"), fixture.KA("x3"), fixture.KS("y1"), fixture.KS("y2")}, authListedKeys(r.Items))
}

// auth066 AUTH-066 Byte order (D-01 fixed).
func auth066(c *Case) {
	e := newAuthEnv(c)
	for i, id := range []string{"B", "a", "aaaaaaaaaa", "aa"} {
		e.AA(id, e.TA(), uint64(i+1))
	}
	r := e.listPage("zla1:a:", "", 10)
	require.Equal(c, []location.AuthorityKey{"zla1:a:10:aaaaaaaaaa", "zla1:a:1:B", "zla1:a:1:a", "zla1:a:2:aa"}, authListedKeys(r.Items))
}

// auth067 AUTH-067 Pagination.
func auth067(c *Case) {
	e := newAuthEnv(c)
	var want []location.AuthorityKey
	for _, id := range []string{"p5", "p3", "p1", "p4", "p2"} {
		e.AS(id, e.TA())
	}
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		want = append(want, fixture.KS(id))
	}
	var got []location.AuthorityKey
	cursor := ""
	for i, size := range []int{2, 2, 1} {
		r := e.listPage("zla1:s:", cursor, 2)
		require.Len(c, r.Items, size, "page %d", i+1)
		if i < 2 {
			require.NotEmpty(c, r.NextCursor, "page %d has a cursor", i+1)
			require.LessOrEqual(c, len(r.NextCursor), location.MaxScanCursorBytes, "page %d's cursor fits the bound", i+1)
		} else {
			require.Empty(c, r.NextCursor, "the last page has no cursor")
		}
		got = append(got, authListedKeys(r.Items)...)
		cursor = r.NextCursor
	}
	require.Equal(c, want, got)
	r := e.listPage("zla1:s:", "", 10)
	require.Equal(c, want, authListedKeys(r.Items))
	require.Empty(c, r.NextCursor)
}

// auth068 AUTH-068 Reserved rows are listed.
func auth068(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("l1", e.TA())
	r := e.listPage("zla1:", "", 10)
	require.Len(c, r.Items, 1)
	require.Equal(c, fixture.KS("l1"), r.Items[0].Key)
	require.Equal(c, location.AllocationReserved, r.Items[0].Snapshot.Allocation.State)
	require.NotNil(c, r.Items[0].Snapshot.PendingCreation)
	authRequireSameSnap(c, R.Creating, &r.Items[0].Snapshot, "listed reserved row")
}

// auth069 AUTH-069 Cursor with another prefix.
func auth069(c *Case) {
	e := newAuthEnv(c)
	e.AA("x1", e.TA(), 1)
	e.AS("y1", e.TA())
	first := e.listPage("zla1:", "", 1)
	require.NotEmpty(c, first.NextCursor)
	e.unchanged("continuing with another prefix", func() {
		r := e.list("zla1:a:", first.NextCursor, 1)
		require.Equal(c, location.KindScanExpired, r.Kind)
	})
}

// fiveSpots creates spot rows l01..l05 on NA.
func (e *authEnv) fiveSpots() []*location.AuthoritySnapshot {
	e.c.Helper()
	var out []*location.AuthoritySnapshot
	for i := 1; i <= 5; i++ {
		out = append(out, e.AS(fmt.Sprintf("l%02d", i), e.TA()))
	}
	return out
}

// auth070 AUTH-070 Row change between pages: scanExpired (memstore), or the
// first page's snapshot (etcd) — never a mix. A store with in-memory
// semantics must expire the cursor, for every kind of row change.
func auth070(c *Case) {
	e := newAuthEnv(c)
	rows := e.fiveSpots()
	first := e.listPage("zla1:s:", "", 2)
	require.Equal(c, []location.AuthorityKey{fixture.KS("l01"), fixture.KS("l02")}, authListedKeys(first.Items))
	require.NotEmpty(c, first.NextCursor)
	e.AS("l99", e.TA())
	e.requireDeleted(e.cas(fixture.KS("l05"), rows[4].StoreVersion, fixture.Delete()))

	next := e.list("zla1:s:", first.NextCursor, 2)
	if c.Caps.InMemorySemantics {
		require.Equal(c, location.KindScanExpired, next.Kind, "an in-memory cursor expires when a row changes")
		e.auth070EveryRowChange()
		return
	}
	if next.Kind == location.KindScanExpired {
		return
	}
	got := authListedKeys(next.Items)
	for cursor := next.NextCursor; cursor != ""; {
		p := e.list("zla1:s:", cursor, 2)
		require.Equal(c, location.KindPage, p.Kind, "a snapshot scan must not expire half-way")
		got = append(got, authListedKeys(p.Items)...)
		cursor = p.NextCursor
	}
	require.Equal(c, []location.AuthorityKey{fixture.KS("l03"), fixture.KS("l04"), fixture.KS("l05")}, got, "the continuation must show the first page's snapshot")
}

// auth070EveryRowChange checks, on an in-memory store, that every kind of
// row change expires a cursor taken before it.
func (e *authEnv) auth070EveryRowChange() {
	e.c.Helper()
	e.AS("lb", e.TB())
	changes := map[string]func(){
		"a preserve": func() {
			S := e.read(fixture.KS("l01")).Snapshot
			e.requireStored(e.cas(fixture.KS("l01"), S.StoreVersion, fixture.Preserve("p")))
		},
		"a reserve and its abort": func() {
			R := e.RS("l98", e.TA())
			require.Equal(e.c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectUserSpot, "l98", R, e.TA())))
		},
		"removeAllByOwner": func() {
			require.Equal(e.c, int64(2), e.removeAll(e.B), "NB's descriptor and one row")
		},
	}
	for what, change := range changes {
		first := e.listPage("zla1:s:", "", 2)
		require.NotEmpty(e.c, first.NextCursor)
		change()
		require.Equal(e.c, location.KindScanExpired, e.list("zla1:s:", first.NextCursor, 2).Kind, "a cursor taken before %s", what)
	}
}

// auth071 AUTH-071 Non-row operations keep cursors valid.
func auth071(c *Case) {
	e := newAuthEnv(c)
	rows := e.fiveSpots()
	first := e.listPage("zla1:s:", "", 2)
	require.NotEmpty(c, first.NextCursor)

	agg := e.AGG("AGc", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("l01"), rows[0])}, fixture.VS("room"))
	e.requirePrepared(e.prepare(agg), agg, location.KindPrepared)
	e.read(fixture.KS("l02"))
	e.readTerminal(fixture.OP(77))
	e.REL("Rc", fixture.KS("l02"), rows[1], e.NA, e.NB)
	require.Equal(c, location.KindAborted, e.abortRel("Rc"))
	require.Equal(c, location.KindAborted, e.abortAgg(authAggFence("AGc", 1)))

	next := e.listPage("zla1:s:", first.NextCursor, 2)
	require.Equal(c, []location.AuthorityKey{fixture.KS("l03"), fixture.KS("l04")}, authListedKeys(next.Items))
}

// auth072 AUTH-072 Failed operations keep cursors valid.
func auth072(c *Case) {
	e := newAuthEnv(c)
	rows := e.fiveSpots()
	first := e.listPage("zla1:s:", "", 2)
	e.requireConflict(e.cas(fixture.KS("l01"), rows[1].StoreVersion, fixture.Preserve("p")), rows[0])
	e.requireReserveKind(e.reserve(fixture.SpotRequest(location.ObjectUserSpot, "l01", e.TA(), "room")), location.KindAlreadyExists, rows[0])
	require.Equal(c, location.KindStale, e.commitAgg(authAggFence("nope", 1)))
	next := e.listPage("zla1:s:", first.NextCursor, 2)
	require.Equal(c, []location.AuthorityKey{fixture.KS("l03"), fixture.KS("l04")}, authListedKeys(next.Items))
}

// auth073 AUTH-073 Undecodable cursor: scanExpired (00-decisions E-10); a
// cursor longer than 4096 bytes is an invalid argument (the Go API has no
// cursor constructor, so the store checks the bound; an empty cursor is "no
// cursor" and starts a scan).
func auth073(c *Case) {
	e := newAuthEnv(c)
	e.fiveSpots()
	for _, cursor := range []string{"garbage", "!!!"} {
		e.unchanged("an undecodable cursor", func() {
			r := e.list("zla1:s:", cursor, 2)
			require.Equal(c, location.KindScanExpired, r.Kind, "cursor %q", cursor)
		})
	}
	e.requireInvalid("a 4097-byte cursor", location.ClassRange, location.CodeAuthorityScanCursor, func() error { return errOf(c.S.ListAuthorities(c.Ctx, "zla1:s:", strings.Repeat("c", 4097), 2)) })
	r := e.listPage("zla1:s:", "", 2)
	require.Equal(c, []location.AuthorityKey{fixture.KS("l01"), fixture.KS("l02")}, authListedKeys(r.Items), "an empty cursor starts a scan")
}

// auth074 AUTH-074 Listed snapshots match reads (a second after the writes)
// and are copies.
func auth074(c *Case) {
	e := newAuthEnv(c)
	e.auth064Setup()
	c.F.Clock.Advance(time.Second)
	r := e.listPage("", "", 10)
	require.Len(c, r.Items, 5)
	for _, it := range r.Items {
		e.requireRow(it.Key, &it.Snapshot)
	}
	r.Items[3].Snapshot.Payload[0] = 'X'
	require.Equal(c, "ready", string(e.read(fixture.KS("y1")).Snapshot.Payload), "a listed snapshot is a copy")
}

// auth075 AUTH-075 Fresh scans reflect changes.
func auth075(c *Case) {
	e := newAuthEnv(c)
	e.auth064Setup()
	y1 := e.read(fixture.KS("y1")).Snapshot
	e.requireDeleted(e.cas(fixture.KS("y1"), y1.StoreVersion, fixture.Delete()))
	e.AS("y3", e.TA())
	keys := authListedKeys(e.listPage("", "", 10).Items)
	require.NotContains(c, keys, fixture.KS("y1"))
	require.Contains(c, keys, fixture.KS("y3"))
}
