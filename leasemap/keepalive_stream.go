package leasemap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
)

// KeepAliveStreams opens etcd LeaseKeepAlive streams (pb.LeaseClient has
// the method; clientv3.RetryLeaseClient(client) is the client's own).
type KeepAliveStreams interface {
	LeaseKeepAlive(ctx context.Context, opts ...grpc.CallOption) (pb.Lease_LeaseKeepAliveClient, error)
}

// DefaultKeepAliveHedge is Options.KeepAliveHedge's default.
const DefaultKeepAliveHedge = time.Second

// maxKeepAliveStreams bounds the streams one renewal sends its keep-alive
// on: the stream it starts on and two hedges (an etcd cluster of three
// has two members left when one is lost).
const maxKeepAliveStreams = 3

// maxOpensPerHedge bounds the streams a hedge opens to reach a member its
// keep-alive was not sent to yet: the balancer's round robin gives a new
// stream the next member, unless other requests of the client were
// balanced in between (then it may be a member already tried again). The
// last one is used whatever member it reached (a one-member cluster has
// no other).
const maxOpensPerHedge = 4

// errMemberTried reports a hedge's stream that reached a member its
// keep-alive was sent to already: it is discarded unused and another one
// opened.
var errMemberTried = errors.New("reached a member already tried")

// keepAliveStream renews one etcd lease on a long-lived LeaseKeepAlive
// stream: one request and its answer per renewal, one renewal at a time,
// so that an answer is always the answer to the request just sent. A
// renewal that fails or whose context ends discards the stream (an answer
// to it could otherwise arrive for the next request); the next renewal
// opens a new one. Measured against a KeepAliveOnce per renewal (which
// opens and closes a stream each time), it renews several times faster
// (docs/sessions.md).
//
// A keep-alive not answered within hedge is sent again on a new stream
// (at most maxKeepAliveStreams streams per renewal), and the first answer
// wins: the stream that gave it is kept, the others are discarded. A
// stream's connection may be to a member that was killed or cut off,
// which the client's balancer keeps using until gRPC keepalive notices
// (seconds). A new stream is balanced afresh, but the balancer is shared
// by all the client's requests, so it may reach a member already tried:
// a hedge's stream whose member (its gRPC peer, known once it is opened)
// is one the keep-alive was sent to already is discarded before anything
// is sent on it and another is opened, up to maxOpensPerHedge streams per
// hedge, so that a hedge reaches another member when the cluster has one,
// well within the renewal's timeout (docs/sessions.md). A keep-alive
// that failed leaves the members its streams reached suspect, for every
// stream of the map, until one is answered: the next keep-alive's first
// stream (a new one) and its hedges avoid them the same way, so that the
// renewal after a lost member does not wait a hedge interval on it
// again. Keep-alives are idempotent: renewing twice is harmless.
type keepAliveStream struct {
	open func(ctx context.Context, opts ...grpc.CallOption) (pb.Lease_LeaseKeepAliveClient, error)
	// life bounds every stream: Close ends it.
	life  context.Context
	hedge time.Duration
	// hedgeAfter, when set, replaces time.After for the hedge interval
	// (tests fire hedges on demand).
	hedgeAfter func(time.Duration) <-chan time.Time
	// log receives, at debug level, each keep-alive that was hedged or
	// failed: the member each of its streams reached.
	log *slog.Logger

	// suspects are the members the keep-alives of the map failed on
	// since one was answered: shared by every stream of the map (its kept
	// leases' and its full renewals'), a member lost to one lease is
	// avoided by the others. Nil: none are kept.
	suspects *memberSuspects

	mu      sync.Mutex
	current *leaseStream // the stream that answered last, or nil
}

// memberSuspects are streams of the keep-alives that failed since the
// last one answered, one per member they reached: those members may be
// lost, so the next keep-alive's first stream and its hedges avoid them
// as a hedge avoids a member already tried. The methods of a nil
// memberSuspects keep nothing.
type memberSuspects struct {
	mu      sync.Mutex
	streams []*leaseStream
}

// list returns the suspects (a copy).
func (ms *memberSuspects) list() []*leaseStream {
	if ms == nil {
		return nil
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return slices.Clone(ms.streams)
}

// settle records how a keep-alive ended: answered (err nil), every
// suspect is cleared; else the members its streams reached are added,
// one stream per member (a stream that never reached one is left out).
func (ms *memberSuspects) settle(streams []*leaseStream, err error) {
	if ms == nil {
		return
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if err == nil {
		ms.streams = nil
		return
	}
	for _, on := range streams {
		addr := on.peer.Load()
		if addr != nil && !slices.ContainsFunc(ms.streams, func(s *leaseStream) bool { return s.peerAddr() == *addr }) {
			ms.streams = append(ms.streams, on)
		}
	}
}

// leaseStream is one LeaseKeepAlive stream (nil until opened) and what
// ends it.
type leaseStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	stream pb.Lease_LeaseKeepAliveClient
	// peer is the address of the member the stream reached, once opened.
	peer atomic.Pointer[string]
}

// peerAddr returns the address the stream reached ("?" while unopened).
func (on *leaseStream) peerAddr() string {
	if p := on.peer.Load(); p != nil {
		return *p
	}
	return "?"
}

// keepAliveAnswer is one stream's answer to a keep-alive.
type keepAliveAnswer struct {
	on  *leaseStream
	ttl int64
	err error
	// opens is on's place among the streams opened to reach a member not
	// tried yet, by a hedge or as a first stream after a keep-alive that
	// failed (1: the first; 0: on was opened without such a condition).
	opens int
}

// keepAlive sends one keep-alive of id and returns the TTL etcd answered
// (0: the lease does not exist). ctx bounds the call (and the opening of
// streams).
func (s *keepAliveStream) keepAlive(ctx context.Context, id clientv3.LeaseID) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, s.failed(ctx, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Every sender answers once, and a stream is opened again only after
	// its sender answered: at most maxKeepAliveStreams answers are
	// unread at any time.
	answers := make(chan keepAliveAnswer, maxKeepAliveStreams)
	var wg sync.WaitGroup
	pending := map[*leaseStream]bool{}
	// streams are the streams the keep-alive was sent on (or is being
	// sent on), in order; discarded, a hedge's streams that reached a
	// member already tried.
	var streams, discarded []*leaseStream
	// hedges counts the hedges sent.
	hedges := 0
	began := time.Now()
	var answeredBy *leaseStream
	var err error
	suspects := s.suspects.list()
	send := func(on *leaseStream, tried []*leaseStream, opens int) {
		pending[on] = true
		streams = append(streams, on)
		wg.Go(func() {
			ttl, err := s.send(ctx, on, tried, id)
			answers <- keepAliveAnswer{on: on, ttl: ttl, err: err, opens: opens}
		})
	}
	// hedge sends the keep-alive on a new stream, the opens-th of its
	// hedge: one that reaches a member of streams is discarded, unless it
	// is the last the hedge may open.
	hedge := func(opens int) {
		var tried []*leaseStream
		if opens < maxOpensPerHedge {
			tried = slices.Concat(streams, suspects)
		}
		send(s.newStream(), tried, opens)
	}
	// unused moves a stream that reached a member already tried, unused,
	// from streams to discarded.
	unused := func(on *leaseStream) {
		streams = slices.DeleteFunc(streams, func(sent *leaseStream) bool { return sent == on })
		discarded = append(discarded, on)
	}
	// On return, every stream still waiting for its answer is discarded,
	// and its sender waited for (the answers left tell which of them
	// were not sent on).
	defer func() {
		for on := range pending {
			on.end()
		}
		wg.Wait()
		close(answers)
		for a := range answers {
			if errors.Is(a.err, errMemberTried) {
				unused(a.on)
			}
		}
		if hedges > 0 || len(discarded) > 0 || err != nil {
			s.logHedged(id, streams, discarded, answeredBy, err, time.Since(began))
		}
		s.suspects.settle(streams, err)
	}()
	// The first stream is the one that answered last; else a new one,
	// opened again (as a hedge's) when it reached a suspect member.
	on, tried, opens := s.current, []*leaseStream(nil), 0
	if on == nil {
		on = s.newStream()
		if len(suspects) > 0 {
			tried, opens = suspects, 1
		}
	}
	s.current = nil
	send(on, tried, opens)
	hedgeDue := s.afterHedge()
	var firstErr error
	for {
		select {
		case <-hedgeDue:
			hedge(1)
			hedges++
			hedgeDue = nil
			if 1+hedges < maxKeepAliveStreams {
				hedgeDue = s.afterHedge()
			}
			continue
		case a := <-answers:
			delete(pending, a.on)
			if errors.Is(a.err, errMemberTried) {
				a.on.end()
				unused(a.on)
				hedge(a.opens + 1)
				continue
			}
			if a.err == nil {
				s.current, answeredBy = a.on, a.on
				return a.ttl, nil
			}
			a.on.end()
			if firstErr == nil {
				firstErr = a.err
			}
			if len(pending) == 0 {
				err = firstErr
				return 0, err
			}
		}
	}
}

// afterHedge returns a channel that delivers once the hedge interval has
// passed.
func (s *keepAliveStream) afterHedge() <-chan time.Time {
	if s.hedgeAfter != nil {
		return s.hedgeAfter(s.hedge)
	}
	return time.After(s.hedge)
}

// newStream returns a stream, opened by its first keep-alive, that ends
// when s's life ends.
func (s *keepAliveStream) newStream() *leaseStream {
	ctx, cancel := context.WithCancel(s.life)
	return &leaseStream{ctx: ctx, cancel: cancel}
}

// send sends one keep-alive of id on the stream (opening it first when
// needed) and returns the TTL answered. A stream it opens that reached
// the member of one of tried sends nothing: send answers errMemberTried.
// The end of ctx ends the stream.
func (s *keepAliveStream) send(ctx context.Context, on *leaseStream, tried []*leaseStream, id clientv3.LeaseID) (int64, error) {
	stop := context.AfterFunc(ctx, on.cancel)
	var err error
	if on.stream == nil {
		on.stream, err = s.open(on.ctx)
		if err == nil {
			if p, ok := peer.FromContext(on.stream.Context()); ok && p.Addr != nil {
				addr := p.Addr.String()
				on.peer.Store(&addr)
				if slices.ContainsFunc(tried, func(t *leaseStream) bool { return t.peerAddr() == addr }) {
					err = errMemberTried
				}
			}
		}
	}
	var resp *pb.LeaseKeepAliveResponse
	if err == nil {
		err = on.stream.Send(&pb.LeaseKeepAliveRequest{ID: int64(id)})
	}
	if err == nil {
		resp, err = on.stream.Recv()
	}
	if !stop() || err != nil {
		return 0, s.failed(ctx, err)
	}
	if resp.ID != int64(id) {
		return 0, fmt.Errorf("keep-alive stream answered lease %x for lease %x", resp.ID, int64(id))
	}
	return resp.TTL, nil
}

// logHedged logs, at debug level, a keep-alive of id that was sent on
// more than one stream or failed: the member each stream reached, in the
// order they were sent, the one that answered, and the members of the
// hedges' streams discarded for reaching a member already tried.
func (s *keepAliveStream) logHedged(id clientv3.LeaseID, streams, discarded []*leaseStream, answeredBy *leaseStream, err error, took time.Duration) {
	if s.log == nil || !s.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	answered := ""
	if answeredBy != nil {
		answered = answeredBy.peerAddr()
	}
	s.log.Debug("leasemap: keep-alive hedged or failed", "lease", fmt.Sprintf("%x", int64(id)),
		"streams", peerList(streams), "answered_by", answered, "discarded", peerList(discarded),
		"took", took, "error", err)
}

// peerList returns the members the streams reached, comma-separated.
func peerList(streams []*leaseStream) string {
	peers := make([]string, len(streams))
	for i, on := range streams {
		peers[i] = on.peerAddr()
	}
	return strings.Join(peers, ",")
}

// failed returns the error of a keep-alive: the context's when it ended
// (which cancelled the stream), else err as the stream reported it.
func (s *keepAliveStream) failed(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("keep-alive stream: %w", context.Cause(ctx))
	}
	if err == nil {
		err = context.Canceled // the stream's life ended (Close)
	}
	return fmt.Errorf("keep-alive stream: %w", err)
}

// end ends the stream.
func (on *leaseStream) end() { on.cancel() }

// close ends the stream for good (its life context is cancelled by the
// caller).
func (s *keepAliveStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil {
		s.current.end()
		s.current = nil
	}
}

// keepAliveOnce sends one keep-alive of lease id and returns its TTL (0 or
// less, or a lease-not-found error: the lease does not exist): on hedged
// streams of its own, closed on return, when the map has KeepAliveStreams
// (so that a full renewal does not wait for a lost member either), else
// with Lease.KeepAliveOnce (which opens and closes a stream too).
func (m *Map) keepAliveOnce(ctx context.Context, id clientv3.LeaseID) (int64, error) {
	if m.streams == nil {
		ka, err := m.lease.KeepAliveOnce(ctx, id)
		if err != nil {
			return 0, err
		}
		return ka.TTL, nil
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	s := &keepAliveStream{open: m.streams.LeaseKeepAlive, life: life, hedge: m.hedge, log: m.log, suspects: &m.suspects}
	defer s.close()
	return s.keepAlive(ctx, id)
}
