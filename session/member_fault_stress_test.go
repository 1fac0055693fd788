//go:build stress

package session_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/pkg/v3/proxy"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/session"
)

// A session rides out the loss of one etcd member of three: with the
// default timing (TTL 15 s, renewals every 5 s with a 3 s timeout, margin
// 5 s) and the etcd client's gRPC keepalive of examples/meshnode (10 s +
// 3 s), every member in turn is cut off from the clients (its bridge
// drops every byte both ways and keeps the connections open, as a killed
// or disconnected container does) for 20 s, while each session's client
// also reads every 200 ms (round robin then spreads the renewals' streams
// over the members as other traffic does). No session may end.
func TestSessionsRideOutOneMemberCutOff(t *testing.T) {
	const sessions = 15
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, err := etcdtest.StartCluster(ctx, 3, etcdtest.Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, cl.Close()) }()
	var bridges []proxy.Server
	var eps []string
	for _, m := range cl.Members {
		b, ep := startBridge(t, ctx, strings.TrimPrefix(m.Endpoints()[0], "http://"))
		bridges = append(bridges, b)
		eps = append(eps, ep)
	}
	defer func() {
		for _, b := range bridges {
			_ = b.Close()
		}
	}()
	root := etcdtest.UniquePrefix(t)

	type node struct {
		cli      *clientv3.Client
		s        *session.Session
		failures atomic.Int64
		counted  bool
	}
	var wg sync.WaitGroup
	stopReads := make(chan struct{})
	nodes := make([]*node, sessions)
	for i := range nodes {
		cli, err := clientv3.New(clientv3.Config{
			Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
			DialOptions: []grpc.DialOption{grpc.WithKeepaliveParams(keepalive.ClientParameters{
				Time: 10 * time.Second, Timeout: 3 * time.Second, PermitWithoutStream: true})},
		})
		require.NoError(t, err)
		defer func() { _ = cli.Close() }()
		st, err := etcdstore.New(cli, etcdstore.Options{Root: root})
		require.NoError(t, err)
		n := &node{cli: cli}
		n.s, err = session.New(ctx, st, fmt.Sprintf("node-%d", i), session.Options{OnRenewal: func(r session.Renewal) {
			if r.Err != nil {
				n.failures.Add(1)
			}
		}})
		require.NoError(t, err)
		defer func() { _ = n.s.Close(context.Background()) }()
		nodes[i] = n
		wg.Go(func() {
			for {
				select {
				case <-stopReads:
					return
				case <-time.After(200 * time.Millisecond):
				}
				rctx, rcancel := context.WithTimeout(ctx, time.Second)
				_, _ = cli.Get(rctx, root+"poll")
				rcancel()
			}
		})
	}
	defer wg.Wait()
	defer close(stopReads)

	lost := 0
	for m, b := range bridges {
		// Every session renews on its stream once before the fault.
		require.Eventually(t, func() bool {
			for _, n := range nodes {
				if !n.s.Status().KeptAlive || n.s.Status().Renewals < 1 {
					return false
				}
			}
			return true
		}, 30*time.Second, 100*time.Millisecond)
		b.BlackholeTx()
		b.BlackholeRx()
		time.Sleep(20 * time.Second) // the fault lasts as in make cluster-test
		b.UnblackholeTx()
		b.UnblackholeRx()
		for i, n := range nodes {
			st := n.s.Status()
			t.Logf("member %d cut off: session %d failed attempts %d err %v", m, i, n.failures.Swap(0), st.Err)
			if st.Err != nil && !n.counted {
				lost, n.counted = lost+1, true
			}
		}
		time.Sleep(10 * time.Second) // the connections to the member come back
	}
	require.Zero(t, lost, "sessions lost")
}

// startBridge starts a TCP bridge to addr and returns it and its client
// URL.
func startBridge(t *testing.T, ctx context.Context, addr string) (proxy.Server, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	from := l.Addr().String()
	require.NoError(t, l.Close())
	b := proxy.NewServer(proxy.ServerConfig{Logger: zap.NewNop(),
		From: urlOf(from), To: urlOf(addr)})
	select {
	case <-b.Ready():
	case err := <-b.Error():
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	go func() {
		for {
			select {
			case <-b.Error():
			case <-b.Done():
				return
			}
		}
	}()
	return b, "http://" + from
}

func urlOf(hostPort string) url.URL { return url.URL{Scheme: "tcp", Host: hostPort} }
