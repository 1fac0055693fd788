package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

const (
	lsXferID  = "01234567-89ab-cdef-0123-456789abcdef"
	lsXfer2ID = "11111111-1111-1111-1111-111111111111"
)

// lsXfer is the catalogue's XFER with a transfer id.
func lsXfer(id string) location.ActorTransferPrepareRequest {
	return location.ActorTransferPrepareRequest{
		MeshName: "game", ActorID: "actor-1", TransferID: id,
		Source:                  location.ActorRef{ActorID: "actor-1", ObjectGeneration: 11, MeshName: "game", NodeRID: "node-a"},
		Target:                  location.ActorRef{ActorID: "actor-1", ObjectGeneration: 11, MeshName: "game", NodeRID: "node-b"},
		ExpectedActorGeneration: 11, ExpectedMembershipEpoch: 4,
		Participants:     []location.RoutingID{"node-a", "node-b"},
		RecoveryOwnerID:  "recovery-a",
		RecoveryLeaseTTL: 30 * time.Second,
	}
}

func lsRef(id string) location.ActorTransferRef {
	return location.ActorTransferRef{MeshName: "game", ActorID: "actor-1", TransferID: id}
}

// TestActorTransfers runs the transfer state machine through the store;
// the rules tests check each transition in detail.
func TestActorTransfers(t *testing.T) {
	t0 := lsT0()
	prepare := func(f *lsFix, r location.ActorTransferPrepareRequest) location.ActorTransferWriteResult {
		f.t.Helper()
		res, err := f.s.PrepareActorTransfer(f.ctx, r)
		require.NoError(f.t, err)
		return res
	}
	resolve := func(f *lsFix) *location.ActorTransferRecord {
		f.t.Helper()
		rec, err := f.s.ResolveActorTransfer(f.ctx, "game", "actor-1")
		require.NoError(f.t, err)
		return rec
	}
	transition := func(f *lsFix, op, id, owner string) location.ActorTransferWriteResult {
		f.t.Helper()
		var res location.ActorTransferWriteResult
		var err error
		switch op {
		case "commit":
			res, err = f.s.CommitActorTransfer(f.ctx, lsRef(id), owner)
		case "activate":
			res, err = f.s.ActivateActorTransfer(f.ctx, lsRef(id), owner)
		case "abort":
			res, err = f.s.AbortActorTransfer(f.ctx, lsRef(id), owner)
		}
		require.NoError(f.t, err)
		return res
	}
	takeOver := func(f *lsFix, id, successor string, ttl time.Duration) location.ActorTransferWriteResult {
		f.t.Helper()
		res, err := f.s.TakeOverActorTransfer(f.ctx, lsRef(id), successor, ttl)
		require.NoError(f.t, err)
		return res
	}
	t.Run("LS-170 prepare", func(t *testing.T) {
		f := newLSFix(t)
		want := location.ActorTransferRecord{
			MeshName: "game", ActorID: "actor-1", TransferID: lsXferID,
			Source: lsXfer(lsXferID).Source, Target: lsXfer(lsXferID).Target,
			ExpectedActorGeneration: 11, ExpectedMembershipEpoch: 4,
			Participants: []location.RoutingID{"node-a", "node-b"}, State: location.TransferPrepared,
			RecoveryOwnerID: "recovery-a", RecoveryLeaseExpiresAt: t0.Add(30 * time.Second), UpdatedAt: t0,
		}
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferStored, Record: &want}, prepare(f, lsXfer(lsXferID)))
		require.Equal(t, &want, resolve(f))
		require.Empty(t, f.state().stamps, "transfers bump no stamp")
	})
	t.Run("LS-171 prepare validation", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			mutate func(*location.ActorTransferPrepareRequest)
			class  location.ErrorClass
		}{
			{"blank mesh", func(r *location.ActorTransferPrepareRequest) { r.MeshName = "  " }, location.ClassType},
			{"empty actor", func(r *location.ActorTransferPrepareRequest) { r.ActorID = "" }, location.ClassType},
			{"upper-case id", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "01234567-89AB-CDEF-0123-456789ABCDEF" }, location.ClassType},
			{"not a uuid", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "not-a-uuid" }, location.ClassType},
			{"braces", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "{" + lsXferID + "}" }, location.ClassType},
			{"blank recovery owner", func(r *location.ActorTransferPrepareRequest) { r.RecoveryOwnerID = " " }, location.ClassType},
			{"ttl 0", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = 0 }, location.ClassType},
			{"ttl -1 ms", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = -time.Millisecond }, location.ClassType},
			{"actor generation 0", func(r *location.ActorTransferPrepareRequest) { r.ExpectedActorGeneration = 0 }, location.ClassRange},
			{"membership epoch 0", func(r *location.ActorTransferPrepareRequest) { r.ExpectedMembershipEpoch = 0 }, location.ClassRange},
			{"no participants", func(r *location.ActorTransferPrepareRequest) { r.Participants = nil }, location.ClassType},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := newLSFix(t)
				r := lsXfer(lsXferID)
				c.mutate(&r)
				f.noEffect(func() {
					_, err := f.s.PrepareActorTransfer(f.ctx, r)
					requireInputError(t, err, c.class)
				})
				require.Nil(t, resolve(f))
			})
		}
	})
	t.Run("LS-172 A-26 idempotent re-prepare ignores content", func(t *testing.T) {
		f := newLSFix(t)
		first := prepare(f, lsXfer(lsXferID))
		f.clk.Advance(time.Second)
		again := lsXfer(lsXferID)
		again.RecoveryOwnerID, again.Participants = "recovery-z", []location.RoutingID{"node-z"}
		f.noEffect(func() { require.Equal(t, first, prepare(f, again)) })
	})
	t.Run("LS-173 a second transfer while one is active", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferRejectedConflict}, prepare(f, lsXfer(lsXfer2ID)))
		require.Equal(t, lsXferID, resolve(f).TransferID)
	})
	t.Run("LS-174 same id while committed", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		transition(f, "commit", lsXferID, "recovery-a")
		require.Equal(t, location.TransferRejectedConflict, prepare(f, lsXfer(lsXferID)).Status)
	})
	t.Run("LS-175 commit", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		require.Equal(t, location.TransferRejectedConflict, transition(f, "commit", lsXferID, "wrong").Status)
		f.clk.Advance(time.Second)
		res := transition(f, "commit", lsXferID, "recovery-a")
		require.Equal(t, location.TransferStored, res.Status)
		require.Equal(t, location.TransferCommitted, res.Record.State)
		require.Equal(t, t0.Add(time.Second), res.Record.UpdatedAt)
		require.Equal(t, t0.Add(30*time.Second), res.Record.RecoveryLeaseExpiresAt)
		require.Equal(t, res.Record, resolve(f))
		require.Equal(t, location.TransferInvalidState, transition(f, "commit", lsXferID, "recovery-a").Status)
	})
	t.Run("LS-176 LS-178 activate, then a new transfer", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		require.Equal(t, location.TransferInvalidState, transition(f, "activate", lsXferID, "recovery-a").Status)
		transition(f, "commit", lsXferID, "recovery-a")
		require.Equal(t, location.TransferActivated, transition(f, "activate", lsXferID, "recovery-a").Record.State)
		require.Nil(t, resolve(f))
		for _, op := range []string{"commit", "activate", "abort"} {
			require.Equal(t, location.TransferNotFound, transition(f, op, lsXferID, "recovery-a").Status)
		}
		require.Equal(t, location.TransferStored, prepare(f, lsXfer(lsXfer2ID)).Status)
		require.Equal(t, lsXfer2ID, resolve(f).TransferID)
	})
	t.Run("LS-177 abort", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		require.Equal(t, location.TransferAborted, transition(f, "abort", lsXferID, "recovery-a").Record.State)
		require.Nil(t, resolve(f))
		prepare(f, lsXfer(lsXfer2ID))
		transition(f, "commit", lsXfer2ID, "recovery-a")
		require.Equal(t, location.TransferInvalidState, transition(f, "abort", lsXfer2ID, "recovery-a").Status)
	})
	t.Run("LS-179 re-preparing a finished id", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		transition(f, "abort", lsXferID, "recovery-a")
		f.clk.Advance(time.Minute)
		res := prepare(f, lsXfer(lsXferID))
		require.Equal(t, location.TransferPrepared, res.Record.State)
		require.Equal(t, t0.Add(time.Minute), res.Record.UpdatedAt)
	})
	t.Run("LS-180 unknown transfers", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		for _, op := range []string{"commit", "activate", "abort"} {
			require.Equal(t, location.TransferNotFound, transition(f, op, lsXfer2ID, "recovery-a").Status)
		}
		res, err := f.s.CommitActorTransfer(f.ctx, location.ActorTransferRef{MeshName: "game", ActorID: "actor-9", TransferID: lsXferID}, "recovery-a")
		require.NoError(t, err)
		require.Equal(t, location.TransferNotFound, res.Status)
		require.Equal(t, location.TransferNotFound, takeOver(f, lsXfer2ID, "recovery-b", time.Second).Status)
	})
	t.Run("LS-181 LS-182 takeover timing", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		f.clk.Set(t0.Add(29999 * time.Millisecond))
		require.Equal(t, location.TransferRejectedConflict, takeOver(f, lsXferID, "recovery-b", 30*time.Second).Status)
		f.clk.Set(t0.Add(30 * time.Second))
		res := takeOver(f, lsXferID, "recovery-b", 30*time.Second)
		require.Equal(t, location.TransferStored, res.Status)
		require.Equal(t, "recovery-b", res.Record.RecoveryOwnerID)
		require.Equal(t, t0.Add(time.Minute), res.Record.RecoveryLeaseExpiresAt)
		require.Equal(t, t0.Add(30*time.Second), res.Record.UpdatedAt)
		require.Equal(t, location.TransferPrepared, res.Record.State)
		require.Equal(t, location.TransferRejectedConflict, transition(f, "commit", lsXferID, "recovery-a").Status)
		require.Equal(t, location.TransferCommitted, transition(f, "commit", lsXferID, "recovery-b").Record.State)
	})
	t.Run("LS-183 takeover of a committed transfer", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		transition(f, "commit", lsXferID, "recovery-a")
		f.clk.Advance(31 * time.Second)
		require.Equal(t, location.TransferCommitted, takeOver(f, lsXferID, "recovery-b", time.Second).Record.State)
	})
	t.Run("LS-184 takeover of finished transfers", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		transition(f, "commit", lsXferID, "recovery-a")
		transition(f, "activate", lsXferID, "recovery-a")
		prepare(f, lsXfer(lsXfer2ID))
		transition(f, "abort", lsXfer2ID, "recovery-a")
		f.clk.Advance(time.Hour)
		require.Equal(t, location.TransferInvalidState, takeOver(f, lsXferID, "recovery-b", time.Second).Status)
		require.Equal(t, location.TransferInvalidState, takeOver(f, lsXfer2ID, "recovery-b", time.Second).Status)
	})
	t.Run("LS-185 takeover validation", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		f.clk.Advance(time.Hour)
		upper := lsRef("01234567-89AB-CDEF-0123-456789ABCDEF")
		noMesh := lsRef(lsXferID)
		noMesh.MeshName = ""
		f.noEffect(func() {
			for _, c := range []struct {
				ref       location.ActorTransferRef
				successor string
				ttl       time.Duration
			}{
				{lsRef(lsXferID), " ", time.Second},
				{lsRef(lsXferID), "recovery-b", 0},
				{upper, "recovery-b", time.Second},
				{noMesh, "recovery-b", time.Second},
			} {
				_, err := f.s.TakeOverActorTransfer(f.ctx, c.ref, c.successor, c.ttl)
				requireInputError(t, err, location.ClassType)
			}
		})
	})
	t.Run("LS-186 A-27 an expired recovery owner keeps its rights", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		f.clk.Advance(31 * time.Second)
		require.Equal(t, location.TransferStored, transition(f, "commit", lsXferID, "recovery-a").Status)
	})
	t.Run("LS-187 self-takeover after expiry", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		f.clk.Advance(31 * time.Second)
		require.Equal(t, t0.Add(41*time.Second), takeOver(f, lsXferID, "recovery-a", 10*time.Second).Record.RecoveryLeaseExpiresAt)
	})
	t.Run("LS-188 slots are independent", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		second := lsXfer(lsXfer2ID)
		second.ActorID = "actor-2"
		third := lsXfer(lsXfer2ID)
		third.MeshName = "other"
		require.Equal(t, location.TransferStored, prepare(f, second).Status)
		require.Equal(t, location.TransferStored, prepare(f, third).Status)
	})
	t.Run("LS-189 transition validation", func(t *testing.T) {
		f := newLSFix(t)
		prepare(f, lsXfer(lsXferID))
		_, err := f.s.CommitActorTransfer(f.ctx, lsRef("01234567-89AB-CDEF-0123-456789ABCDEF"), "recovery-a")
		requireInputError(t, err, location.ClassType)
		noMesh := lsRef(lsXferID)
		noMesh.MeshName = ""
		_, err = f.s.CommitActorTransfer(f.ctx, noMesh, "recovery-a")
		requireInputError(t, err, location.ClassType)
		require.Equal(t, location.TransferRejectedConflict, transition(f, "commit", lsXferID, "").Status)
	})
	t.Run("LS-208 transfer lease under one millisecond", func(t *testing.T) {
		f := newLSFix(t)
		for _, ttl := range []time.Duration{0, -time.Millisecond, 999 * time.Microsecond} {
			r := lsXfer(lsXferID)
			r.RecoveryLeaseTTL = ttl
			_, err := f.s.PrepareActorTransfer(f.ctx, r)
			requireInputError(t, err, location.ClassType)
			ie, _ := location.AsInputError(err)
			require.Equal(t, location.CodeTransferLease, ie.Code)
			_, err = f.s.TakeOverActorTransfer(f.ctx, lsRef(lsXferID), "recovery-b", ttl)
			require.Equal(t, location.CodeTransferLease, func() string { ie, _ := location.AsInputError(err); return ie.Code }())
		}
		r := lsXfer(lsXferID)
		r.RecoveryLeaseTTL = time.Millisecond
		require.Equal(t, t0.Add(time.Millisecond), prepare(f, r).Record.RecoveryLeaseExpiresAt)
		require.Equal(t, location.TransferRejectedConflict, takeOver(f, lsXferID, "recovery-b", time.Millisecond).Status)
		f.clk.Advance(time.Millisecond)
		require.Equal(t, location.TransferStored, takeOver(f, lsXferID, "recovery-b", time.Millisecond).Status)
	})
	t.Run("LS-203 resolved records are copies", func(t *testing.T) {
		f := newLSFix(t)
		r := lsXfer(lsXferID)
		prepare(f, r)
		r.Participants[0] = "x"
		got := resolve(f)
		got.Participants[1] = "y"
		require.Equal(t, []location.RoutingID{"node-a", "node-b"}, resolve(f).Participants)
	})
}
