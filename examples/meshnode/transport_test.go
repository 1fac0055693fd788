package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/location"
)

// testHeartbeat keeps the test that waits for a silent connection short,
// and the silence window (three of them) long enough for a loaded machine.
const testHeartbeat = 100 * time.Millisecond

// waitFor polls cond until it holds, failing the test after a deadline
// (the machine is shared: generous, and never a fixed sleep).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testNode is a transport that serves lifecycle generation 7 while
// refuse is nil.
type testNode struct {
	*meshTransport
	refuse atomic.Pointer[error]
}

func newTestNode(t *testing.T, id string) *testNode {
	t.Helper()
	n := &testNode{}
	tr, err := newMeshTransport("127.0.0.1:0", transportOptions{NodeID: id, Mesh: "m", Dial: true, Heartbeat: testHeartbeat,
		Log: slog.New(slog.DiscardHandler), Admit: func(lifecycle int64) error {
			if p := n.refuse.Load(); p != nil {
				return *p
			}
			if lifecycle != 7 {
				return fmt.Errorf("lifecycle generation %d is not this node's current one (7)", lifecycle)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	n.meshTransport = tr
	return n
}

// targetOf is the auto-connect target of node id at addr.
func targetOf(id string, lifecycle int64, addr net.Addr) autoconnect.Target {
	rid := location.RoutingID(id)
	return autoconnect.Target{Key: fmt.Sprintf("router|%s|%d", rid.Hex(), lifecycle), NodeRID: &rid,
		LifecycleGeneration: lifecycle, Endpoint: "tcp://" + addr.String(), OwnerID: id}
}

// peersOf lists a transport's links as "peer/direction".
func peersOf(tr *meshTransport) string {
	var out []string
	for _, l := range tr.Links() {
		out = append(out, fmt.Sprintf("%s/%s", l.Peer, l.Direction))
	}
	return strings.Join(out, ",")
}

// connectedPair starts the nodes a and b and connects a to b (target tb),
// once b sees the connection.
func connectedPair(t *testing.T) (a, b *testNode, tb autoconnect.Target) {
	t.Helper()
	a, b = newTestNode(t, "a"), newTestNode(t, "b")
	tb = targetOf("b", 7, b.Addr())
	if !a.Connect(context.Background(), tb) {
		t.Fatal("Connect to b: false")
	}
	waitFor(t, "b sees a's connection", func() bool { return peersOf(b.meshTransport) == "a/in" })
	return a, b, tb
}

func TestTransportConnects(t *testing.T) {
	a, b, tb := connectedPair(t)
	if got := peersOf(a.meshTransport); got != "b/out" {
		t.Errorf("a's links: %q, want b/out", got)
	}
	if a.IsDisconnected(tb) {
		t.Error("IsDisconnected(b) after a connect")
	}
	if !a.Connect(context.Background(), tb) {
		t.Error("Connect to b again: false, want true (already connected)")
	}
	a.Disconnect(tb)
	if !a.IsDisconnected(tb) {
		t.Error("IsDisconnected(b) false after Disconnect")
	}
	waitFor(t, "b sees the connection end", func() bool { return peersOf(b.meshTransport) == "" })
}

func TestTransportRefuses(t *testing.T) {
	a, b := newTestNode(t, "a"), newTestNode(t, "b")
	untrusted := errors.New("this node's lease is not trusted")
	tests := []struct {
		name   string
		target autoconnect.Target
		refuse error
	}{
		{"another lifecycle generation", targetOf("b", 6, b.Addr()), nil},
		{"another node at the address", targetOf("c", 7, b.Addr()), nil},
		{"a lease not trusted", targetOf("b", 7, b.Addr()), untrusted},
		{"nothing listening", targetOf("b", 7, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.refuse != nil {
				b.refuse.Store(&tc.refuse)
				defer b.refuse.Store(nil)
			}
			if a.Connect(context.Background(), tc.target) {
				t.Fatal("Connect: true, want a refusal")
			}
			if !a.IsDisconnected(tc.target) || peersOf(a.meshTransport) != "" || peersOf(b.meshTransport) != "" {
				t.Errorf("after a refusal: a %q, b %q, want no link", peersOf(a.meshTransport), peersOf(b.meshTransport))
			}
		})
	}
}

func TestTransportDropInbound(t *testing.T) {
	a, b, tb := connectedPair(t)
	b.DropInbound("lease no longer trusted")
	if got := peersOf(b.meshTransport); got != "" {
		t.Errorf("b's links after DropInbound: %q", got)
	}
	waitFor(t, "a sees its connection to b closed", func() bool { return a.IsDisconnected(tb) })
}

// A peer that welcomes and then stays silent is dropped after
// silenceBeats heartbeats.
func TestTransportDropsASilentPeer(t *testing.T) {
	a := newTestNode(t, "a")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = bufio.NewReader(c).ReadString('\n')
		_, _ = c.Write([]byte(`{"ok":true}` + "\n"))
		held <- c // welcomed, and silent from now on
	}()
	tb := targetOf("b", 7, ln.Addr())
	if !a.Connect(context.Background(), tb) {
		t.Fatal("Connect: false")
	}
	c := <-held
	defer c.Close()
	waitFor(t, "the silent peer's link is dropped", func() bool { return a.IsDisconnected(tb) })
}

func TestTransportLogOnly(t *testing.T) {
	tr, err := newMeshTransport("", transportOptions{NodeID: "a", Mesh: "m", Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Addr() != nil {
		t.Errorf("a log-only transport listens on %v", tr.Addr())
	}
	tb := targetOf("b", 7, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
	if !tr.Connect(context.Background(), tb) || tr.IsDisconnected(tb) || peersOf(tr) != "b/out" {
		t.Fatalf("log-only Connect: links %q", peersOf(tr))
	}
	tr.Disconnect(tb)
	if !tr.IsDisconnected(tb) || peersOf(tr) != "" {
		t.Errorf("after Disconnect: links %q", peersOf(tr))
	}
}
