package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// The transfer scenarios of the catalogue (LS-170 … LS-189) run through a
// store in conformance. These tests check what the transfer rules keep to
// themselves: the plans they make and the slot's active pointer.

// xferDecide runs one transfer decision on src and applies it.
func xferDecide(t *testing.T, src *lsSource, decide func(*Tx) (location.ActorTransferWriteResult, error)) (location.ActorTransferWriteResult, *Plan) {
	t.Helper()
	return lsRun(t, src, decide)
}

// activeXfer is the slot's active transfer as the rules find it.
func activeXfer(src *lsSource) *location.ActorTransferRecord {
	r, ok := ActiveActorTransfer(NewTx(src), fixture.MeshGame, "actor-1")
	if !ok {
		return nil
	}
	return &r
}

func TestActorTransferRules(t *testing.T) {
	ref := fixture.XferRef(fixture.XFER())
	prepare := func(r location.ActorTransferPrepareRequest) func(*Tx) (location.ActorTransferWriteResult, error) {
		return func(tx *Tx) (location.ActorTransferWriteResult, error) { return PrepareActorTransfer(tx, r) }
	}
	t.Run("no transfer decision plans a stamp", func(t *testing.T) {
		src := newLSSource()
		steps := []struct {
			at     time.Duration
			decide func(*Tx) (location.ActorTransferWriteResult, error)
		}{
			{0, prepare(fixture.XFER())},
			{0, func(tx *Tx) (location.ActorTransferWriteResult, error) {
				return CommitActorTransfer(tx, ref, "recovery-a")
			}},
			{30 * time.Second, func(tx *Tx) (location.ActorTransferWriteResult, error) {
				return TakeOverActorTransfer(tx, ref, "recovery-b", time.Second)
			}},
			{30 * time.Second, func(tx *Tx) (location.ActorTransferWriteResult, error) {
				return ActivateActorTransfer(tx, ref, "recovery-b")
			}},
			{30 * time.Second, prepare(fixture.XFER2())},
			{30 * time.Second, func(tx *Tx) (location.ActorTransferWriteResult, error) {
				return AbortActorTransfer(tx, fixture.XferRef(fixture.XFER2()), "recovery-a")
			}},
		}
		for i, step := range steps {
			src.now = fixture.T0().Add(step.at)
			res, plan := xferDecide(t, src, step.decide)
			require.Equal(t, location.TransferStored, res.Status, "step %d", i)
			require.Empty(t, plan.Stamps, "step %d", i)
			require.Empty(t, plan.MeshNodeStamps, "step %d", i)
		}
	})
	t.Run("participants are copied in as a set", func(t *testing.T) {
		src := newLSSource()
		r := fixture.XFER()
		r.Participants = []location.RoutingID{"node-b", "node-a", "node-b"}
		res, _ := xferDecide(t, src, prepare(r))
		require.Equal(t, []location.RoutingID{"node-b", "node-a"}, res.Record.Participants)
		r.Participants[0] = "x"
		require.Equal(t, []location.RoutingID{"node-b", "node-a"}, activeXfer(src).Participants)
	})
	t.Run("an idempotent re-prepare plans nothing", func(t *testing.T) {
		src := newLSSource()
		xferDecide(t, src, prepare(fixture.XFER()))
		src.now = fixture.T0().Add(time.Second)
		again := fixture.XFER()
		again.RecoveryOwnerID, again.Participants = "recovery-z", []location.RoutingID{"node-z"}
		tx := NewTx(src)
		res, err := PrepareActorTransfer(tx, again)
		require.NoError(t, err)
		want := fixture.XferRecord(fixture.XFER(), fixture.T0())
		require.Equal(t, location.ActorTransferWriteResult{Status: location.TransferStored, Record: &want}, res)
		require.True(t, tx.Plan().Empty())
	})
	t.Run("a takeover keeps the slot's active pointer", func(t *testing.T) {
		src := newLSSource()
		xferDecide(t, src, prepare(fixture.XFER()))
		src.now = fixture.T0().Add(30 * time.Second)
		res, _ := xferDecide(t, src, func(tx *Tx) (location.ActorTransferWriteResult, error) {
			return TakeOverActorTransfer(tx, ref, "recovery-b", 30*time.Second)
		})
		require.Equal(t, location.TransferStored, res.Status)
		require.Equal(t, res.Record, activeXfer(src))
	})
	t.Run("returned records are copies", func(t *testing.T) {
		src := newLSSource()
		res, _ := xferDecide(t, src, prepare(fixture.XFER()))
		res.Record.Participants[0] = "x"
		require.Equal(t, []location.RoutingID{"node-a", "node-b"}, activeXfer(src).Participants)
	})
}
