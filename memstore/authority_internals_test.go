package memstore

import (
	"encoding/base64"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// TestScanCursors checks memstore's ListAuthorities cursors: text that does
// not decode to a cursor of this store's format (version m1, revision,
// offset, prefix) is scanExpired, an offset past the end is an empty page,
// and a cursor keeps any prefix bytes.
func TestScanCursors(t *testing.T) {
	t.Run("malformed cursors are scanExpired", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		f.AS("g1", na)
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for _, c := range []string{"garbage", "!!!", enc("m1:"), enc("m1:x:0:"), enc("m1:0:-1:"), enc("m2:0:0:"), enc("m1:0")} {
			f.noEffect(func() {
				r, err := f.s.ListAuthorities(f.ctx, "", c, 1)
				require.NoError(t, err)
				require.Equal(t, location.AuthorityScanResult{Kind: location.KindScanExpired}, r, "cursor %q", c)
			})
		}
	})
	t.Run("an offset past the end gives an empty page", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		f.AS("g1", na)
		for _, offset := range []int{1, 5, math.MaxInt} {
			c := scanCursor{revision: f.state().scanRevision, offset: offset, prefix: ""}.encode()
			r, err := f.s.ListAuthorities(f.ctx, "", c, 3)
			require.NoError(t, err)
			require.Equal(t, location.AuthorityScanResult{Kind: location.KindPage, Items: []location.AuthorityEntry{}}, r)
		}
	})
	t.Run("a cursor round-trips any prefix bytes", func(t *testing.T) {
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
}

// TestAuthorityTables checks what memstore keeps in its authority tables:
// a read of an expired creation terminal deletes it (D-13), no empty ledger
// bucket is kept once capacity is returned, and RemoveAllByOwner removes
// only the rows of the exact owner token, releasing their capacity.
func TestAuthorityTables(t *testing.T) {
	t.Run("a read of an expired terminal purges it", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		T := fixture.Target(na)
		R := f.reserved(f.s.Reserve(f.ctx, fixture.ActorRequest("a1", T)))
		res, err := f.s.CompleteCreation(f.ctx, fixture.CompleteRequest("a1", R, T, location.TerminalCreated, fixture.P(fixture.OP(1), fixture.T0().Add(time.Minute))))
		require.NoError(t, err)
		require.Equal(t, location.KindCreated, res.Kind)
		stored := func() bool {
			f.s.mu.Lock()
			defer f.s.mu.Unlock()
			_, ok := f.s.tables[rules.TableOperationTerminals][rules.OperationKey(fixture.OP(1))]
			return ok
		}
		f.clk.Set(res.Terminal.ExpiresAt)
		require.True(t, stored(), "an expired terminal lingers until read")
		read, err := f.s.ReadCreationTerminal(f.ctx, fixture.OP(1))
		require.NoError(t, err)
		require.Equal(t, location.TerminalReadResult{Kind: location.KindMissing, StoreNow: res.Terminal.ExpiresAt}, read)
		require.False(t, stored(), "the read purged the expired terminal")
	})
	t.Run("no empty ledger bucket is kept", func(t *testing.T) {
		f := newMemFix(t)
		na, nb := f.authorityF()
		S := f.AS("e1", na)
		f.reserved(f.s.Reserve(f.ctx, fixture.ActorRequest("e2", fixture.Target(na))))
		R, err := f.s.ReserveRelocationCapacity(f.ctx, fixture.RelRequest("R1", fixture.KS("e1"), S, na, nb, fixture.VS("room")))
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, R.Kind)
		moved, err := f.s.CompareExchangeAuthority(f.ctx, fixture.KS("e1"), S.StoreVersion, fixture.NewOwner("moved", nb.Owner(), "R1"))
		require.NoError(t, err)
		require.Equal(t, location.KindStored, moved.Kind)
		deleted, err := f.s.CompareExchangeAuthority(f.ctx, fixture.KS("e1"), moved.Stored.StoreVersion, fixture.Delete())
		require.NoError(t, err)
		require.Equal(t, location.KindDeleted, deleted.Kind)
		require.Positive(t, f.wroteN(f.s.RemoveAllByOwner(f.ctx, na.Owner())))
		f.s.mu.Lock()
		defer f.s.mu.Unlock()
		require.Empty(t, f.s.tables[rules.TableLedger], "every bucket went back to zero and was deleted")
	})
	t.Run("RemoveAllByOwner removes the exact token's authority rows", func(t *testing.T) {
		f := newMemFix(t)
		a := f.claim("a")
		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim))
		f.putAuthorityRow("zla1:s:6:spot-x", a)
		f.putAuthorityRow("zla1:s:6:spot-y", fixture.Token("a", a.LeaseGeneration+7))
		require.Equal(t, int64(2), f.wroteN(f.s.RemoveAllByOwner(f.ctx, a)), "the spot row and one authority row")
		st := f.state()
		require.NotContains(t, st.tables[rules.TableAuthority], "zla1:s:6:spot-x")
		require.Contains(t, st.tables[rules.TableAuthority], "zla1:s:6:spot-y", "another token's record stays")
		b := rules.Bucket{Descriptor: fixture.MNKey(), Lifecycle: 7, Name: rules.BucketSpot}.Key()
		require.Equal(t, rules.LedgerEntry{Active: 1}, st.tables[rules.TableLedger][b].Value, "the removed record's capacity is released")
	})
}

// wroteN requires a count without error.
func (f *memFix) wroteN(n int64, err error) int64 {
	f.t.Helper()
	require.NoError(f.t, err)
	return n
}

// putAuthorityRow stores an active authority row of the owner token with one
// spot of capacity on K_A (lifecycle 7) and its ledger entry, as a committed
// creation would: rows of an older lease generation cannot be made through
// the API while the owner is live.
func (f *memFix) putAuthorityRow(key string, owner location.OwnerToken) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.tables[rules.TableAuthority] == nil {
		f.s.tables[rules.TableAuthority] = map[string]rules.Record{}
		f.s.tables[rules.TableLedger] = map[string]rules.Record{}
	}
	f.s.tables[rules.TableAuthority][key] = rules.Record{Value: rules.AuthorityRow{
		StoreVersion: "1",
		Owner:        owner,
		Allocation: location.PlacementAllocation{
			State: location.AllocationActive, ObjectKind: location.ObjectUserSpot, StableType: "lobby",
			Descriptor: fixture.MNKey(), DescriptorLifecycleGeneration: 7, Capacity: location.CapacityVector{Spots: 1},
		},
	}}
	b := rules.Bucket{Descriptor: fixture.MNKey(), Lifecycle: 7, Name: rules.BucketSpot}.Key()
	e, _ := f.s.tables[rules.TableLedger][b].Value.(rules.LedgerEntry)
	e.Active++
	f.s.tables[rules.TableLedger][b] = rules.Record{Value: e}
}
