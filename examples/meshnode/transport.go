package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/examples/meshnode/statedoc"
	"github.com/zlink-systems/zlink-etcd/meshnode"
)

// The mesh protocol of the example, one JSON or text line at a time over
// TCP: the dialer sends a hello naming itself, the node it means to reach
// and both lifecycle generations; the listener answers a welcome (ok, or
// why not) and, once accepted, both sides send "ping" every heartbeat and
// drop a connection that stays silent for three. It carries nothing else:
// its point is that connections really cross the container network (and
// its NetworkPolicies), and that a node that stopped trusting its lease
// drops them and refuses new ones.
const (
	defaultHeartbeat = time.Second
	silenceBeats     = 3
	// handshakeTimeout bounds a dial and its hello/welcome exchange.
	handshakeTimeout = 2 * time.Second
	pingLine         = "ping\n"
)

// hello is the dialer's first line.
type hello struct {
	Mesh          string `json:"mesh"`
	From          string `json:"from"`
	FromLifecycle int64  `json:"fromLifecycle"`
	To            string `json:"to"`
	ToLifecycle   int64  `json:"toLifecycle"`
}

// welcome is the listener's answer.
type welcome struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// direction says who dialed a link.
type direction string

const (
	outbound direction = "out"
	inbound  direction = "in"
)

// link is one connection to a peer.
type link struct {
	dir           direction
	peer          string
	peerLifecycle int64
	endpoint      string
	since         time.Time
	// conn is nil for a link of a transport that does not dial (log only).
	conn net.Conn
	r    *bufio.Reader

	once sync.Once
	done chan struct{}
}

// ended reports whether the link's connection is closed.
func (l *link) ended() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// close closes the connection; it reports whether this call did.
func (l *link) close() bool {
	closed := false
	l.once.Do(func() {
		closed = true
		if l.conn != nil {
			_ = l.conn.Close()
		}
		close(l.done)
	})
	return closed
}

// transportOptions configure a meshTransport.
type transportOptions struct {
	NodeID, Mesh string
	// Dial makes Connect open a TCP connection; without it the transport
	// only logs and keeps no listener.
	Dial bool
	// Admit decides whether an inbound hello for this node's lifecycle
	// generation is served: nil when the node is joined at that
	// generation and trusts its lease, otherwise why not.
	Admit     func(lifecycle int64) error
	Log       *slog.Logger
	Heartbeat time.Duration
}

// meshTransport is the example's autoconnect.Executor: it logs every
// connect and disconnect and, with Dial, keeps a real TCP connection to
// each peer it connects to (autoconnect.DisconnectProber: a connection
// that died is reported, and the loop dials again). Its listener serves
// the peers that dial this node. Safe for concurrent use.
type meshTransport struct {
	o  transportOptions
	ln net.Listener

	mu     sync.Mutex
	out    map[string]*link // by target key
	in     map[*link]struct{}
	closed bool
	wg     sync.WaitGroup
}

// newMeshTransport returns a transport; with opts.Dial it listens on
// listen (the mesh port) and serves inbound hellos until Close.
func newMeshTransport(listen string, opts transportOptions) (*meshTransport, error) {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = defaultHeartbeat
	}
	t := &meshTransport{o: opts, out: map[string]*link{}, in: map[*link]struct{}{}}
	if !opts.Dial {
		return t, nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("mesh listener: %w", err)
	}
	t.ln = ln
	t.wg.Add(1)
	go t.serve()
	return t, nil
}

// Addr is the listener's address (nil without one).
func (t *meshTransport) Addr() net.Addr {
	if t.ln == nil {
		return nil
	}
	return t.ln.Addr()
}

// Connect implements autoconnect.Executor: it dials the target's endpoint
// and says hello; the link counts once the peer welcomes it. It refuses to
// connect for an incarnation whose lease is not trusted.
func (t *meshTransport) Connect(ctx context.Context, target autoconnect.Target) bool {
	peer := peerName(target)
	log := t.o.Log.With("peer", peer, "peerLifecycle", target.LifecycleGeneration, "endpoint", target.Endpoint)
	inc, hasInc := meshnode.IncarnationFrom(ctx)
	if hasInc && !inc.Session.Valid() {
		log.Warn("connect refused: this node's lease is not trusted")
		return false
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	if l, ok := t.out[target.Key]; ok && !l.ended() {
		t.mu.Unlock()
		return true
	}
	t.mu.Unlock()

	l := &link{dir: outbound, peer: peer, peerLifecycle: target.LifecycleGeneration, endpoint: target.Endpoint,
		since: time.Now(), done: make(chan struct{})}
	if t.o.Dial {
		conn, r, err := t.handshake(ctx, target, inc.LifecycleGeneration)
		if err != nil {
			log.Warn("connect failed", "err", err)
			return false
		}
		l.conn, l.r = conn, r
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		l.close()
		return false
	}
	if old, ok := t.out[target.Key]; ok {
		old.close()
	}
	t.out[target.Key] = l
	t.mu.Unlock()
	t.run(l)
	if t.o.Dial {
		log.Info("peer connected", "direction", outbound)
	} else {
		log.Info("peer connected (log only: --dial-peers=false)", "direction", outbound)
	}
	return true
}

// handshake dials the target and exchanges hello and welcome.
func (t *meshTransport) handshake(ctx context.Context, target autoconnect.Target, lifecycle int64) (net.Conn, *bufio.Reader, error) {
	addr, ok := strings.CutPrefix(target.Endpoint, "tcp://")
	if !ok {
		return nil, nil, fmt.Errorf("endpoint %q is not tcp://host:port", target.Endpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	r := bufio.NewReader(conn)
	err = writeJSONLine(conn, hello{Mesh: t.o.Mesh, From: t.o.NodeID, FromLifecycle: lifecycle,
		To: peerName(target), ToLifecycle: target.LifecycleGeneration})
	var w welcome
	if err == nil {
		err = readJSONLine(r, &w)
	}
	if err == nil && !w.OK {
		err = fmt.Errorf("peer refused: %s", w.Reason)
	}
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, r, nil
}

// Disconnect implements autoconnect.Executor.
func (t *meshTransport) Disconnect(target autoconnect.Target) {
	t.mu.Lock()
	l, ok := t.out[target.Key]
	delete(t.out, target.Key)
	t.mu.Unlock()
	if ok && l.close() {
		t.o.Log.Info("peer disconnected", "peer", l.peer, "peerLifecycle", l.peerLifecycle, "direction", outbound)
	}
}

// IsDisconnected implements autoconnect.DisconnectProber: the connection to
// target is gone (or was never made).
func (t *meshTransport) IsDisconnected(target autoconnect.Target) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.out[target.Key]
	return !ok || l.ended()
}

// DropInbound closes every inbound connection: the node's lease is no
// longer trusted, so it serves no peer (its own Disconnect calls drop the
// outbound ones). New hellos are refused until Admit accepts again.
func (t *meshTransport) DropInbound(reason string) {
	t.mu.Lock()
	var drop []*link
	for l := range t.in {
		drop = append(drop, l)
	}
	clear(t.in)
	t.mu.Unlock()
	for _, l := range drop {
		if l.close() {
			t.o.Log.Info("peer disconnected", "peer", l.peer, "peerLifecycle", l.peerLifecycle, "direction", inbound, "reason", reason)
		}
	}
}

// Links returns the open links, sorted by peer and direction.
func (t *meshTransport) Links() []statedoc.Link {
	t.mu.Lock()
	var ls []*link
	for _, l := range t.out {
		ls = append(ls, l)
	}
	for l := range t.in {
		ls = append(ls, l)
	}
	t.mu.Unlock()
	var out []statedoc.Link
	for _, l := range ls {
		if !l.ended() {
			out = append(out, statedoc.Link{Peer: l.peer, PeerLifecycle: l.peerLifecycle, Direction: string(l.dir), Endpoint: l.endpoint, Since: l.since})
		}
	}
	slices.SortFunc(out, func(a, b statedoc.Link) int {
		if c := strings.Compare(a.Peer, b.Peer); c != 0 {
			return c
		}
		return strings.Compare(a.Direction, b.Direction)
	})
	return out
}

// Close stops the listener and closes every link, and waits for the
// transport's goroutines.
func (t *meshTransport) Close() {
	t.mu.Lock()
	t.closed = true
	var ls []*link
	for _, l := range t.out {
		ls = append(ls, l)
	}
	for l := range t.in {
		ls = append(ls, l)
	}
	clear(t.out)
	clear(t.in)
	t.mu.Unlock()
	if t.ln != nil {
		_ = t.ln.Close()
	}
	for _, l := range ls {
		l.close()
	}
	t.wg.Wait()
}

// serve accepts inbound connections until the listener closes.
func (t *meshTransport) serve() {
	defer t.wg.Done()
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				t.o.Log.Error("mesh listener stopped", "err", err)
			}
			return
		}
		t.wg.Add(1)
		go t.accept(conn)
	}
}

// accept reads a hello and welcomes or refuses it.
func (t *meshTransport) accept(conn net.Conn) {
	defer t.wg.Done()
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	r := bufio.NewReader(conn)
	var h hello
	if err := readJSONLine(r, &h); err != nil {
		t.o.Log.Debug("inbound connection without a hello", "remote", conn.RemoteAddr().String(), "err", err)
		_ = conn.Close()
		return
	}
	log := t.o.Log.With("peer", h.From, "peerLifecycle", h.FromLifecycle, "remote", conn.RemoteAddr().String())
	why := t.admit(h)
	if why != nil {
		_ = writeJSONLine(conn, welcome{Reason: why.Error()})
		_ = conn.Close()
		log.Warn("inbound connection refused", "reason", why)
		return
	}
	l := &link{dir: inbound, peer: h.From, peerLifecycle: h.FromLifecycle, since: time.Now(), conn: conn, r: r, done: make(chan struct{})}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		_ = conn.Close()
		return
	}
	t.in[l] = struct{}{}
	t.mu.Unlock()
	if err := writeJSONLine(conn, welcome{OK: true}); err != nil {
		t.forget(l)
		l.close()
		log.Warn("inbound connection lost during its handshake", "err", err)
		return
	}
	_ = conn.SetDeadline(time.Time{})
	// A lease lost between the check and the registration: drop it now.
	if err := t.admit(h); err != nil {
		t.forget(l)
		l.close()
		log.Warn("inbound connection dropped", "reason", err)
		return
	}
	t.run(l)
	log.Info("peer connected", "direction", inbound)
}

// admit checks an inbound hello.
func (t *meshTransport) admit(h hello) error {
	switch {
	case h.Mesh != t.o.Mesh:
		return fmt.Errorf("this node serves mesh %q, not %q", t.o.Mesh, h.Mesh)
	case h.To != t.o.NodeID:
		return fmt.Errorf("this is node %q, not %q", t.o.NodeID, h.To)
	}
	return t.o.Admit(h.ToLifecycle)
}

// forget removes an inbound link from the set.
func (t *meshTransport) forget(l *link) {
	t.mu.Lock()
	delete(t.in, l)
	t.mu.Unlock()
}

// run starts the link's heartbeat and reader; a link without a connection
// (log only) has neither.
func (t *meshTransport) run(l *link) {
	if l.conn == nil {
		return
	}
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(t.o.Heartbeat)
		defer tick.Stop()
		for {
			select {
			case <-l.done:
				return
			case <-tick.C:
				_ = l.conn.SetWriteDeadline(time.Now().Add(t.o.Heartbeat))
				if _, err := l.conn.Write([]byte(pingLine)); err != nil {
					t.lost(l, err)
					return
				}
			}
		}
	}()
	go func() {
		defer t.wg.Done()
		for {
			_ = l.conn.SetReadDeadline(time.Now().Add(silenceBeats * t.o.Heartbeat))
			if _, err := l.r.ReadSlice('\n'); err != nil {
				t.lost(l, err)
				return
			}
		}
	}()
}

// lost ends a link whose connection failed (the peer closed it, or stayed
// silent); a link closed on purpose is not reported again.
func (t *meshTransport) lost(l *link, err error) {
	if l.dir == inbound {
		t.forget(l)
	}
	if l.close() {
		t.o.Log.Info("peer connection lost", "peer", l.peer, "peerLifecycle", l.peerLifecycle, "direction", l.dir, "err", err)
	}
}

// peerName is the routing id of a target (its endpoint when it has none).
func peerName(t autoconnect.Target) string {
	if t.NodeRID != nil {
		return string(*t.NodeRID)
	}
	return t.Endpoint
}

func writeJSONLine(conn net.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = conn.Write(append(b, '\n'))
	return err
}

// maxLine bounds a handshake line.
const maxLine = 4 << 10

func readJSONLine(r *bufio.Reader, v any) error {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(line) > maxLine {
		return errors.New("handshake line too long")
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}
