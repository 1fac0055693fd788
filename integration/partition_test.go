package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The partition fault holds a bridge's traffic back, as a network
// partition does to a TCP connection: a watch through it loses no event
// (every change made during the partition arrives once it heals, in
// order). A blackhole would not do: dropping bytes from a live connection
// silently drops whole watch responses (measured: 100 of 300 events lost,
// no error, docs/reliability.md), which no network does to TCP.
func TestPartitionLosesNoWatchEvent(t *testing.T) {
	tc, err := startCluster(t.Context())
	require.NoError(t, err)
	defer func() { require.NoError(t, tc.close()) }()
	watched, err := tc.client(0)
	require.NoError(t, err)
	defer func() { _ = watched.Close() }()
	raw, err := tc.directClient()
	require.NoError(t, err)
	defer func() { _ = raw.Close() }()

	const prefix, puts = "/partition/", 150
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(t.Context()))
	defer cancel()
	wch := watched.Watch(ctx, prefix, clientv3.WithPrefix())
	b := tc.bridges[0]
	for i := range puts {
		switch i {
		case 50:
			b.PauseTx()
			b.PauseRx()
		case 100:
			b.UnpauseTx()
			b.UnpauseRx()
		}
		_, err := raw.Put(t.Context(), fmt.Sprintf("%s%04d", prefix, i), "v")
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond)
	}
	next := 0
	deadline := time.After(30 * time.Second)
	for next < puts {
		select {
		case resp, ok := <-wch:
			require.True(t, ok, "the watch ended")
			for _, ev := range resp.Events {
				require.Equal(t, fmt.Sprintf("%s%04d", prefix, next), string(ev.Kv.Key), "every event, in order")
				next++
			}
		case <-deadline:
			t.Fatalf("%d of %d events arrived", next, puts)
		}
	}
}
