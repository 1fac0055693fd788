package integration

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/pkg/v3/proxy"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// testCluster is an embedded three-member cluster whose clients reach each
// member through a TCP bridge (etcd's proxy), so that a member's clients
// can be blackholed.
type testCluster struct {
	cl      *etcdtest.Cluster
	bridges []proxy.Server
	down    []bool
}

// startCluster starts the members and their bridges.
func startCluster(ctx context.Context) (*testCluster, error) {
	cl, err := etcdtest.StartCluster(ctx, 3, etcdtest.Config{})
	if err != nil {
		return nil, err
	}
	tc := &testCluster{cl: cl, down: make([]bool, len(cl.Members))}
	for _, m := range cl.Members {
		to, err := url.Parse(m.Endpoints()[0])
		if err != nil {
			_ = tc.close()
			return nil, err
		}
		port, err := freePort()
		if err != nil {
			_ = tc.close()
			return nil, err
		}
		b := proxy.NewServer(proxy.ServerConfig{
			Logger: zap.NewNop(),
			From:   url.URL{Scheme: "tcp", Host: fmt.Sprintf("127.0.0.1:%d", port)},
			To:     url.URL{Scheme: "tcp", Host: to.Host},
		})
		tc.bridges = append(tc.bridges, b)
		select {
		case <-b.Ready():
		case err := <-b.Error():
			_ = tc.close()
			return nil, err
		case <-ctx.Done():
			_ = tc.close()
			return nil, ctx.Err()
		}
		go drainBridgeErrors(b)
	}
	return tc, nil
}

// drainBridgeErrors reads a bridge's errors until it closes. The bridge
// reports every failed dial to its member (while the member is down) on a
// channel of 16 and stops accepting connections when nobody reads it.
func drainBridgeErrors(b proxy.Server) {
	for {
		select {
		case <-b.Error():
		case <-b.Done():
			return
		}
	}
}

// freePort picks a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// bridgeEndpoint is the client URL of member i's bridge.
func (tc *testCluster) bridgeEndpoint(i int) string {
	return "http://" + strings.TrimPrefix(tc.bridges[i].From(), "tcp://")
}

// client dials member i through its bridge. Keepalives notice a dead
// connection after a blackhole.
func (tc *testCluster) client(i int) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:            []string{tc.bridgeEndpoint(i)},
		DialTimeout:          2 * time.Second,
		DialKeepAliveTime:    500 * time.Millisecond,
		DialKeepAliveTimeout: 500 * time.Millisecond,
		Logger:               zap.NewNop(),
	})
}

// directClient dials every member directly.
func (tc *testCluster) directClient() (*clientv3.Client, error) { return tc.cl.Client() }

// leader is the index of the member that leads, or -1.
func (tc *testCluster) leader() int {
	for i, m := range tc.cl.Members {
		if !tc.down[i] && m.IsLeader() {
			return i
		}
	}
	return -1
}

// close stops the bridges and the members.
func (tc *testCluster) close() error {
	for _, b := range tc.bridges {
		_ = b.Close()
	}
	return tc.cl.Close()
}
