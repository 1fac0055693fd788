package rules

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

// lsRef names a transfer of the XFER slot.
func lsRef(id string) location.ActorTransferRef {
	return location.ActorTransferRef{MeshName: "game", ActorID: "actor-1", TransferID: id}
}

// lsXferRecord is the record XFER(id) prepared at `at` yields.
func lsXferRecord(id string, at time.Time) location.ActorTransferRecord {
	r := lsXfer(id)
	return location.ActorTransferRecord{
		MeshName: r.MeshName, ActorID: r.ActorID, TransferID: id, Source: r.Source, Target: r.Target,
		ExpectedActorGeneration: 11, ExpectedMembershipEpoch: 4, Participants: []location.RoutingID{"node-a", "node-b"},
		State: location.TransferPrepared, RecoveryOwnerID: "recovery-a",
		RecoveryLeaseExpiresAt: at.Add(30 * time.Second), UpdatedAt: at,
	}
}

func lsPrepare(t *testing.T, src *lsSource, r location.ActorTransferPrepareRequest) location.ActorTransferWriteResult {
	t.Helper()
	res, plan := lsRun(t, src, func(tx *Tx) (location.ActorTransferWriteResult, error) { return PrepareActorTransfer(tx, r) })
	require.Empty(t, plan.Stamps, "transfers bump no stamp")
	return res
}

// lsTransition runs commit, activate or abort.
func lsTransition(t *testing.T, src *lsSource, op string, id, owner string) location.ActorTransferWriteResult {
	t.Helper()
	res, _ := lsRun(t, src, func(tx *Tx) (location.ActorTransferWriteResult, error) {
		switch op {
		case "commit":
			return CommitActorTransfer(tx, lsRef(id), owner)
		case "activate":
			return ActivateActorTransfer(tx, lsRef(id), owner)
		default:
			return AbortActorTransfer(tx, lsRef(id), owner)
		}
	})
	return res
}

func lsTakeOver(t *testing.T, src *lsSource, id, successor string, ttl time.Duration) location.ActorTransferWriteResult {
	t.Helper()
	res, _ := lsRun(t, src, func(tx *Tx) (location.ActorTransferWriteResult, error) {
		return TakeOverActorTransfer(tx, lsRef(id), successor, ttl)
	})
	return res
}

func lsActive(src *lsSource) *location.ActorTransferRecord {
	r, ok := ActiveActorTransfer(NewTx(src), "game", "actor-1")
	if !ok {
		return nil
	}
	return &r
}

func lsOutcome(s location.TransferWriteStatus) location.ActorTransferWriteResult {
	return location.ActorTransferWriteResult{Status: s}
}

func TestActorTransfers(t *testing.T) {
	t0 := lsT0()
	t.Run("LS-170 prepare", func(t *testing.T) {
		src := newLSSource()
		want := lsXferRecord(lsXferID, t0)
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferStored, Record: &want}, lsPrepare(t, src, lsXfer(lsXferID)))
		require.Equal(t, &want, lsActive(src))
	})
	t.Run("participants are copied as a set", func(t *testing.T) {
		src := newLSSource()
		r := lsXfer(lsXferID)
		r.Participants = []location.RoutingID{"node-b", "node-a", "node-b"}
		res := lsPrepare(t, src, r)
		require.Equal(t, []location.RoutingID{"node-b", "node-a"}, res.Record.Participants)
		r.Participants[0] = "x"
		require.Equal(t, []location.RoutingID{"node-b", "node-a"}, lsActive(src).Participants)
	})
	t.Run("LS-172 A-26 idempotent re-prepare ignores content", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		src.now = t0.Add(time.Second)
		again := lsXfer(lsXferID)
		again.RecoveryOwnerID, again.Participants = "recovery-z", []location.RoutingID{"node-z"}
		tx := NewTx(src)
		res, err := PrepareActorTransfer(tx, again)
		require.NoError(t, err)
		want := lsXferRecord(lsXferID, t0)
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferStored, Record: &want}, res)
		require.True(t, tx.Plan().Empty())
	})
	t.Run("LS-173 a second transfer while one is active", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		require.Equal(t, lsOutcome(location.TransferRejectedConflict), lsPrepare(t, src, lsXfer(lsXfer2ID)))
		require.Equal(t, lsXferID, lsActive(src).TransferID)
	})
	t.Run("LS-174 same id while committed", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		require.Equal(t, location.TransferStored, lsTransition(t, src, "commit", lsXferID, "recovery-a").Status)
		require.Equal(t, lsOutcome(location.TransferRejectedConflict), lsPrepare(t, src, lsXfer(lsXferID)))
	})
	t.Run("LS-175 commit", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		require.Equal(t, lsOutcome(location.TransferRejectedConflict), lsTransition(t, src, "commit", lsXferID, "wrong"))
		src.now = t0.Add(time.Second)
		want := lsXferRecord(lsXferID, t0)
		want.State, want.UpdatedAt = location.TransferCommitted, t0.Add(time.Second)
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferStored, Record: &want}, lsTransition(t, src, "commit", lsXferID, "recovery-a"))
		require.Equal(t, &want, lsActive(src))
		require.Equal(t, lsOutcome(location.TransferInvalidState), lsTransition(t, src, "commit", lsXferID, "recovery-a"))
	})
	t.Run("LS-176 activate", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		require.Equal(t, lsOutcome(location.TransferInvalidState), lsTransition(t, src, "activate", lsXferID, "recovery-a"))
		lsTransition(t, src, "commit", lsXferID, "recovery-a")
		res := lsTransition(t, src, "activate", lsXferID, "recovery-a")
		require.Equal(t, location.TransferStored, res.Status)
		require.Equal(t, location.TransferActivated, res.Record.State)
		require.Nil(t, lsActive(src))
		for _, op := range []string{"commit", "activate", "abort"} {
			require.Equal(t, lsOutcome(location.TransferNotFound), lsTransition(t, src, op, lsXferID, "recovery-a"), op)
		}
		t.Run("LS-178 new transfer after completion", func(t *testing.T) {
			res := lsPrepare(t, src, lsXfer(lsXfer2ID))
			require.Equal(t, location.TransferStored, res.Status)
			require.Equal(t, lsXfer2ID, lsActive(src).TransferID)
		})
	})
	t.Run("LS-177 abort", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		res := lsTransition(t, src, "abort", lsXferID, "recovery-a")
		require.Equal(t, location.TransferStored, res.Status)
		require.Equal(t, location.TransferAborted, res.Record.State)
		require.Nil(t, lsActive(src))
		lsPrepare(t, src, lsXfer(lsXfer2ID))
		lsTransition(t, src, "commit", lsXfer2ID, "recovery-a")
		require.Equal(t, lsOutcome(location.TransferInvalidState), lsTransition(t, src, "abort", lsXfer2ID, "recovery-a"))
	})
	t.Run("LS-179 re-preparing a finished id", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		lsTransition(t, src, "abort", lsXferID, "recovery-a")
		src.now = t0.Add(time.Minute)
		want := lsXferRecord(lsXferID, t0.Add(time.Minute))
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferStored, Record: &want}, lsPrepare(t, src, lsXfer(lsXferID)))
	})
	t.Run("LS-180 unknown transfers", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		for _, op := range []string{"commit", "activate", "abort"} {
			require.Equal(t, lsOutcome(location.TransferNotFound), lsTransition(t, src, op, lsXfer2ID, "recovery-a"), op)
		}
		res, _ := lsRun(t, src, func(tx *Tx) (location.ActorTransferWriteResult, error) {
			return CommitActorTransfer(tx, location.ActorTransferRef{MeshName: "game", ActorID: "actor-9", TransferID: lsXferID}, "recovery-a")
		})
		require.Equal(t, lsOutcome(location.TransferNotFound), res)
		require.Equal(t, lsOutcome(location.TransferNotFound), lsTakeOver(t, src, lsXfer2ID, "recovery-b", time.Second))
	})
	t.Run("LS-181 LS-182 takeover timing", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		src.now = t0.Add(30*time.Second - time.Millisecond)
		require.Equal(t, lsOutcome(location.TransferRejectedConflict), lsTakeOver(t, src, lsXferID, "recovery-b", 30*time.Second))
		src.now = t0.Add(30 * time.Second)
		want := lsXferRecord(lsXferID, t0)
		want.RecoveryOwnerID, want.RecoveryLeaseExpiresAt, want.UpdatedAt = "recovery-b", t0.Add(time.Minute), t0.Add(30*time.Second)
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferStored, Record: &want}, lsTakeOver(t, src, lsXferID, "recovery-b", 30*time.Second))
		require.Equal(t, &want, lsActive(src), "the active pointer stays")
		require.Equal(t, lsOutcome(location.TransferRejectedConflict), lsTransition(t, src, "commit", lsXferID, "recovery-a"))
		require.Equal(t, location.TransferCommitted, lsTransition(t, src, "commit", lsXferID, "recovery-b").Record.State)
	})
	t.Run("LS-183 takeover of a committed transfer", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		lsTransition(t, src, "commit", lsXferID, "recovery-a")
		src.now = t0.Add(31 * time.Second)
		res := lsTakeOver(t, src, lsXferID, "recovery-b", 30*time.Second)
		require.Equal(t, location.TransferStored, res.Status)
		require.Equal(t, location.TransferCommitted, res.Record.State)
	})
	t.Run("LS-184 takeover of finished transfers", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		lsTransition(t, src, "commit", lsXferID, "recovery-a")
		lsTransition(t, src, "activate", lsXferID, "recovery-a")
		src.now = t0.Add(time.Hour)
		require.Equal(t, lsOutcome(location.TransferInvalidState), lsTakeOver(t, src, lsXferID, "recovery-b", time.Second))
		lsPrepare(t, src, lsXfer(lsXfer2ID))
		lsTransition(t, src, "abort", lsXfer2ID, "recovery-a")
		src.now = t0.Add(2 * time.Hour)
		require.Equal(t, lsOutcome(location.TransferInvalidState), lsTakeOver(t, src, lsXfer2ID, "recovery-b", time.Second))
	})
	t.Run("LS-186 A-27 an expired recovery owner keeps its rights", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		src.now = t0.Add(31 * time.Second)
		require.Equal(t, location.TransferStored, lsTransition(t, src, "commit", lsXferID, "recovery-a").Status)
	})
	t.Run("LS-187 self-takeover after expiry", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		src.now = t0.Add(31 * time.Second)
		res := lsTakeOver(t, src, lsXferID, "recovery-a", 10*time.Second)
		require.Equal(t, t0.Add(41*time.Second), res.Record.RecoveryLeaseExpiresAt)
	})
	t.Run("LS-188 slots are independent", func(t *testing.T) {
		src := newLSSource()
		lsPrepare(t, src, lsXfer(lsXferID))
		second := lsXfer(lsXfer2ID)
		second.ActorID = "actor-2"
		require.Equal(t, location.TransferStored, lsPrepare(t, src, second).Status)
		third := lsXfer(lsXfer2ID)
		third.MeshName = "other"
		require.Equal(t, location.TransferStored, lsPrepare(t, src, third).Status)
	})
	t.Run("LS-208 a TTL of 1 ms expires 1 ms later", func(t *testing.T) {
		src := newLSSource()
		r := lsXfer(lsXferID)
		r.RecoveryLeaseTTL = time.Millisecond + 500*time.Microsecond // truncated to 1 ms
		require.Equal(t, t0.Add(time.Millisecond), lsPrepare(t, src, r).Record.RecoveryLeaseExpiresAt)
		src.now = t0.Add(time.Millisecond)
		require.Equal(t, location.TransferStored, lsTakeOver(t, src, lsXferID, "recovery-b", time.Millisecond).Status)
	})
	t.Run("returned records are copies", func(t *testing.T) {
		src := newLSSource()
		res := lsPrepare(t, src, lsXfer(lsXferID))
		res.Record.Participants[0] = "x"
		require.Equal(t, []location.RoutingID{"node-a", "node-b"}, lsActive(src).Participants)
	})
}
