package memstore

import (
	"encoding/base64"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// keysOf returns the keys of a page.
func keysOf(p location.AuthorityScanResult) []location.AuthorityKey {
	out := []location.AuthorityKey{}
	for _, it := range p.Items {
		out = append(out, it.Key)
	}
	return out
}

func TestListAuthorities(t *testing.T) {
	t.Run("AUTH-063_empty_store", func(t *testing.T) {
		f := newAuFix(t)
		require.Equal(t, location.AuthorityScanResult{Kind: location.KindPage, Items: []location.AuthorityEntry{}}, f.list("zla1:", "", 10))
	})
	t.Run("AUTH-064_AUTH-065_AUTH-074_AUTH-075_prefixes_and_reads", func(t *testing.T) {
		f := newAuFix(t)
		for i, id := range []string{"x1", "x2", "x3"} {
			f.AA(id, auTarget(f.NA), uint64(i+1))
		}
		y1 := f.AS("y1", auTarget(f.NA))
		f.AS("y2", auTarget(f.NA))
		require.Equal(t, []location.AuthorityKey{auKA("x1"), auKA("x2"), auKA("x3")}, keysOf(f.list("zla1:a:", "", 10)))
		require.Equal(t, []location.AuthorityKey{auKS("y1"), auKS("y2")}, keysOf(f.list("zla1:s:", "", 10)))
		all := f.list("", "", 10)
		require.Len(t, all.Items, 5)
		require.Empty(t, all.NextCursor)
		for _, it := range all.Items {
			require.Equal(t, auSnap(it.Snapshot), f.read(it.Key), "AUTH-074 %s", it.Key)
			require.Equal(t, auT0(), it.Snapshot.StoreNow)
		}
		f.CAS(auKS("y1"), y1.StoreVersion, auDelete())
		f.AS("y3", auTarget(f.NA))
		require.Equal(t, []location.AuthorityKey{auKS("y2"), auKS("y3")}, keysOf(f.list("zla1:s:", "", 10)))
	})
	t.Run("AUTH-066_byte_order_D-01", func(t *testing.T) {
		f := newAuFix(t)
		for i, id := range []string{"B", "a", "aaaaaaaaaa", "aa"} {
			f.AA(id, auTarget(f.NA), uint64(i+1))
		}
		require.Equal(t, []location.AuthorityKey{"zla1:a:10:aaaaaaaaaa", "zla1:a:1:B", "zla1:a:1:a", "zla1:a:2:aa"}, keysOf(f.list("zla1:a:", "", 10)))
	})
	t.Run("AUTH-067_pagination", func(t *testing.T) {
		f := newAuFix(t)
		want := []location.AuthorityKey{}
		for i := range 5 {
			id := fmt.Sprintf("l%02d", i+1)
			f.AS(id, auTarget(f.NA))
			want = append(want, auKS(id))
		}
		var got []location.AuthorityKey
		cursor := ""
		var sizes []int
		for {
			p := f.list("zla1:s:", cursor, 2)
			require.Equal(t, location.KindPage, p.Kind)
			sizes = append(sizes, len(p.Items))
			got = append(got, keysOf(p)...)
			if p.NextCursor == "" {
				break
			}
			require.LessOrEqual(t, len(p.NextCursor), location.MaxScanCursorBytes)
			cursor = p.NextCursor
		}
		require.Equal(t, []int{2, 2, 1}, sizes)
		require.Equal(t, want, got)
		one := f.list("zla1:s:", "", 10)
		require.Len(t, one.Items, 5)
		require.Empty(t, one.NextCursor)
	})
	t.Run("AUTH-068_reserved_rows_are_listed", func(t *testing.T) {
		f := newAuFix(t)
		r := f.RS("l1", auTarget(f.NA))
		p := f.list("", "", 10)
		require.Equal(t, []location.AuthorityEntry{{Key: auKS("l1"), Snapshot: *r.Creating}}, p.Items)
	})
	t.Run("AUTH-069_cursor_with_another_prefix", func(t *testing.T) {
		f := newAuFix(t)
		f.AA("x1", auTarget(f.NA), 1)
		f.AA("x2", auTarget(f.NA), 2)
		c := f.list("zla1:", "", 1).NextCursor
		require.NotEmpty(t, c)
		require.Equal(t, location.AuthorityScanResult{Kind: location.KindScanExpired}, f.list("zla1:a:", c, 1))
	})
	t.Run("AUTH-070_row_change_between_pages_expires_the_cursor", func(t *testing.T) {
		for name, change := range map[string]func(f *auFix){
			"reserve_and_commit": func(f *auFix) { f.AS("l99", auTarget(f.NA)) },
			"delete": func(f *auFix) {
				f.CAS(auKS("l05"), f.current(auKS("l05")).StoreVersion, auDelete())
			},
			"preserve": func(f *auFix) {
				f.CAS(auKS("l01"), f.current(auKS("l01")).StoreVersion, auPreserve("p"))
			},
			"reserve_then_abort": func(f *auFix) {
				r := f.RS("l98", auTarget(f.NA))
				f.abort(auAbortReq(location.ObjectUserSpot, "l98", r, auTarget(f.NA)))
			},
			"remove_all_by_owner": func(f *auFix) {
				n, err := f.s.RemoveAllByOwner(f.ctx, f.B)
				require.NoError(f.t, err)
				require.Equal(f.t, int64(2), n, "NB's descriptor and one row")
			},
		} {
			t.Run(name, func(t *testing.T) {
				f := newAuFix(t)
				for i := range 5 {
					f.AS(fmt.Sprintf("l%02d", i+1), auTarget(f.NA))
				}
				f.AS("lb", auTarget(f.NB))
				c := f.list("zla1:s:", "", 2).NextCursor
				require.NotEmpty(t, c)
				change(f)
				require.Equal(t, location.AuthorityScanResult{Kind: location.KindScanExpired}, f.list("zla1:s:", c, 2))
			})
		}
	})
	t.Run("AUTH-071_AUTH-072_other_operations_keep_cursors_valid", func(t *testing.T) {
		f := newAuFix(t)
		s1 := f.AS("g1", auTarget(f.NA))
		s2 := f.AS("g2", auTarget(f.NA))
		f.AA("a1", auTarget(f.NA), 1)
		c := f.list("", "", 1).NextCursor
		require.NotEmpty(t, c)
		// AUTH-071: operations that change no row.
		require.Equal(t, location.KindPrepared, f.prepare(f.aggReq("AG1", 1, auVS("room", 1), auPart{auKS("g2"), s2.StoreVersion, location.TransitionNewOwner})).Kind)
		f.read(auKS("g1"))
		f.readTerminal(auOP(1))
		require.Equal(t, location.KindReserved, f.REL(auRelReq("R1", auKS("g1"), s1, f.NA, f.NB, auVS("room", 1))).Kind)
		require.Equal(t, location.KindAborted, f.abortRel("R1"))
		require.Equal(t, location.KindAborted, f.abortAgg("AG1", 1))
		// AUTH-072: failed operations.
		require.Equal(t, location.KindConflict, f.CAS(auKS("g1"), "99", auPreserve("p")).Kind)
		require.Equal(t, location.KindAlreadyExists, f.reserve(auReserveReq(location.ObjectUserSpot, "g1", "room", auTarget(f.NA), auVS("room", 1))).Kind)
		require.Equal(t, location.KindStale, f.commitAgg("nope", 1))
		p := f.list("", c, 1)
		require.Equal(t, location.KindPage, p.Kind)
		require.Equal(t, []location.AuthorityKey{auKS("g1")}, keysOf(p))
	})
	t.Run("AUTH-073_undecodable_cursor_is_scan_expired_E-10", func(t *testing.T) {
		f := newAuFix(t)
		f.AS("g1", auTarget(f.NA))
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for _, c := range []string{
			"garbage", "!!!", enc("m1:"), enc("m1:x:0:"), enc("m1:0:-1:"), enc("m2:0:0:"), enc("m1:0"),
		} {
			f.unchanged(func() {
				require.Equal(t, location.AuthorityScanResult{Kind: location.KindScanExpired}, f.list("", c, 1), "cursor %q", c)
			})
		}
		f.invalid(location.ClassRange, "authority.scan_cursor", func() error {
			_, err := f.s.ListAuthorities(f.ctx, "", string(make([]byte, location.MaxScanCursorBytes+1)), 1)
			return err
		})
	})
	t.Run("offset_past_the_end_gives_an_empty_page", func(t *testing.T) {
		f := newAuFix(t)
		f.AS("g1", auTarget(f.NA))
		for _, offset := range []int{1, 5, math.MaxInt} {
			c := scanCursor{revision: f.state().scanRevision, offset: offset, prefix: ""}.encode()
			require.Equal(t, location.AuthorityScanResult{Kind: location.KindPage, Items: []location.AuthorityEntry{}}, f.list("", c, 3))
		}
	})
	t.Run("cursor_round_trip_keeps_any_prefix_bytes", func(t *testing.T) {
		for _, c := range []scanCursor{
			{revision: 0, offset: 0, prefix: ""},
			{revision: 7, offset: 3, prefix: "zla1:a:1:"},
			{revision: 1 << 62, offset: 999, prefix: "a:b:\x00\xff"},
		} {
			got, ok := decodeScanCursor(c.encode())
			require.True(t, ok)
			require.Equal(t, c, got)
		}
	})
	t.Run("listed_snapshots_are_copies_at_call_time", func(t *testing.T) {
		f := newAuFix(t)
		f.AS("g1", auTarget(f.NA))
		f.clk.Advance(time.Second)
		p := f.list("", "", 1)
		require.Equal(t, auT0().Add(time.Second), p.Items[0].Snapshot.StoreNow)
		p.Items[0].Snapshot.Payload[0] = 'X'
		require.Equal(t, []byte("ready"), f.current(auKS("g1")).Payload)
	})
}
