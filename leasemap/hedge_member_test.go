package leasemap

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/zlink-systems/zlink-etcd/internal/syncio"
)

// The members of the fake cluster below.
const (
	memberA = "10.0.0.10:2379"
	memberB = "10.0.0.11:2379"
	memberC = "10.0.0.12:2379"
)

// memberTTL is the TTL a fake member answers.
const memberTTL = 30

// memberOpen is where the balancer puts one stream: its member, and
// whether that member is hung (cut off without FIN or RST: a keep-alive
// sent there vanishes) or slow (it answers once the test has fired its
// hedges); lateOpen: the open returns only once the stream has been
// ended (an open that raced the end of its renewal).
type memberOpen struct {
	member     string
	hung, slow bool
	lateOpen   bool
}

// memberStreams opens fake keep-alive streams, the n-th on the member its
// script's n-th entry names (as the client's shared round robin might
// place them); a stream on a live member answers each keep-alive with
// memberTTL. Each keep-alive sent is reported on sent; hedged is closed
// by the test once it has fired its hedges.
type memberStreams struct {
	script []memberOpen
	sent   chan *memberStream
	hedged chan struct{}

	mu     sync.Mutex
	opened []*memberStream
}

func newMemberStreams(script ...memberOpen) *memberStreams {
	return &memberStreams{script: script, sent: make(chan *memberStream, 16), hedged: make(chan struct{})}
}

var errNotScripted = errors.New("memberStreams: more streams opened than scripted")

func (m *memberStreams) LeaseKeepAlive(ctx context.Context, _ ...grpc.CallOption) (pb.Lease_LeaseKeepAliveClient, error) {
	m.mu.Lock()
	if len(m.opened) == len(m.script) {
		m.mu.Unlock()
		return nil, errNotScripted
	}
	open := m.script[len(m.opened)]
	addr := net.TCPAddrFromAddrPort(netip.MustParseAddrPort(open.member))
	st := &memberStream{
		memberOpen: open,
		ctx:        peer.NewContext(ctx, &peer.Peer{Addr: addr}),
		requests:   make(chan *pb.LeaseKeepAliveRequest, 1),
		streams:    m,
	}
	m.opened = append(m.opened, st)
	m.mu.Unlock()
	if open.lateOpen {
		<-ctx.Done()
	} else if err := ctx.Err(); err != nil {
		return nil, err
	}
	return st, nil
}

// streams returns the streams opened, in order.
func (m *memberStreams) streams() []*memberStream {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*memberStream(nil), m.opened...)
}

type memberStream struct {
	grpc.ClientStream // not used: the methods below are
	memberOpen
	ctx      context.Context
	requests chan *pb.LeaseKeepAliveRequest
	streams  *memberStreams

	mu   sync.Mutex
	sent int
}

func (s *memberStream) Context() context.Context { return s.ctx }

func (s *memberStream) Send(req *pb.LeaseKeepAliveRequest) error {
	s.mu.Lock()
	s.sent++
	s.mu.Unlock()
	if !s.hung {
		s.requests <- req // one request at a time: never more than one unanswered
	}
	s.streams.sent <- s
	return nil
}

func (s *memberStream) Recv() (*pb.LeaseKeepAliveResponse, error) {
	select {
	case req := <-s.requests:
		if s.slow {
			select {
			case <-s.streams.hedged:
			case <-s.ctx.Done():
				return nil, s.ctx.Err()
			}
		}
		return &pb.LeaseKeepAliveResponse{ID: req.ID, TTL: memberTTL}, nil
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

func (s *memberStream) keepAlivesSent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

func (s *memberStream) ended() bool { return s.ctx.Err() != nil }

// sentAndDiscarded returns the members of the streams a keep-alive was
// sent on and of those closed unused (which must have ended), in the
// order they were opened.
func sentAndDiscarded(t *testing.T, opened []*memberStream) (sentTo, discarded []string) {
	t.Helper()
	for _, st := range opened {
		switch st.keepAlivesSent() {
		case 0:
			discarded = append(discarded, st.member)
			require.True(t, st.ended(), "a stream closed unused is ended")
		case 1:
			sentTo = append(sentTo, st.member)
		default:
			t.Fatalf("%d keep-alives sent on one stream", st.keepAlivesSent())
		}
	}
	return sentTo, discarded
}

// A hedge reaches a member its keep-alive was not sent to yet when the
// cluster has one: a hedge's stream that the balancer placed on a member
// already tried is closed unused and another opened, up to
// maxOpensPerHedge per hedge; the last is used whatever member it
// reached (a one-member cluster has no other). Hedges are fired by the
// test, each once the keep-alive was sent on the stream before, so the
// order of the opens is the script's. keepAlive returns only once every
// sender it started has returned (no goroutine outlives it); every stream
// but the one that answered has ended by then, and close ends that one.
func TestHedgeReachesAnotherMember(t *testing.T) {
	live := func(member string) memberOpen { return memberOpen{member: member} }
	hung := func(member string) memberOpen { return memberOpen{member: member, hung: true} }
	slow := func(member string) memberOpen { return memberOpen{member: member, slow: true} }
	lateOpen := func(member string) memberOpen { return memberOpen{member: member, lateOpen: true} }
	tests := []struct {
		name   string
		script []memberOpen
		// hedges is how many hedges the test fires.
		hedges int
		// sentTo: the members the keep-alive was sent to, in order;
		// discarded: those of the streams closed unused.
		sentTo, discarded []string
		// answeredBy is the place in script of the stream that answers.
		answeredBy int
	}{
		{name: "answered at once: no hedge",
			script: []memberOpen{live(memberA)},
			sentTo: []string{memberA}, answeredBy: 0},
		{name: "a hedge on another member",
			script: []memberOpen{hung(memberA), live(memberB)}, hedges: 1,
			sentTo: []string{memberA, memberB}, answeredBy: 1},
		{name: "the hedge lands on the hung member: opened again, on another",
			script: []memberOpen{hung(memberA), hung(memberA), live(memberB)}, hedges: 1,
			sentTo: []string{memberA, memberB}, discarded: []string{memberA}, answeredBy: 2},
		{name: "two members hung: the second hedge skips both",
			script: []memberOpen{hung(memberA), hung(memberA), hung(memberB), hung(memberA), hung(memberB), live(memberC)}, hedges: 2,
			sentTo: []string{memberA, memberB, memberC}, discarded: []string{memberA, memberA, memberB}, answeredBy: 5},
		{name: "every open of a hedge on the hung member: the last used, the next hedge reaches another",
			script: []memberOpen{hung(memberA), hung(memberA), hung(memberA), hung(memberA), hung(memberA), live(memberB)}, hedges: 2,
			sentTo: []string{memberA, memberA, memberB}, discarded: []string{memberA, memberA, memberA}, answeredBy: 5},
		{name: "one member: the hedge's last open is used",
			script: []memberOpen{hung(memberA), live(memberA), live(memberA), live(memberA), live(memberA)}, hedges: 1,
			sentTo: []string{memberA, memberA}, discarded: []string{memberA, memberA, memberA}, answeredBy: 4},
		{name: "answered while a hedge's open, on the member already tried, was under way: that stream is closed unused",
			script: []memberOpen{slow(memberA), lateOpen(memberA)}, hedges: 1,
			sentTo: []string{memberA}, discarded: []string{memberA}, answeredBy: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newMemberStreams(tc.script...)
			life, end := context.WithCancel(t.Context())
			defer end()
			hedgeDue := make(chan time.Time)
			var logs syncio.Buffer
			s := &keepAliveStream{open: fake.LeaseKeepAlive, life: life, hedge: time.Hour,
				hedgeAfter: func(time.Duration) <-chan time.Time { return hedgeDue },
				log:        slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
			const id = clientv3.LeaseID(0x1f)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // bounds the test only
			defer cancel()

			type answer struct {
				ttl int64
				err error
			}
			answered := make(chan answer, 1)
			go func() {
				ttl, err := s.keepAlive(ctx, id)
				answered <- answer{ttl, err}
			}()
			for range tc.hedges {
				select {
				case <-fake.sent: // the keep-alive was sent on the last stream
				case <-ctx.Done():
					t.Fatal("the keep-alive was not sent")
				}
				select {
				case hedgeDue <- time.Now():
				case <-ctx.Done():
					t.Fatal("the hedge was not taken")
				}
			}
			close(fake.hedged)
			got := <-answered
			require.NoError(t, got.err)
			require.Equal(t, int64(memberTTL), got.ttl)

			opened := fake.streams()
			require.Len(t, opened, len(tc.script), "every scripted stream opened, no more")
			sentTo, discarded := sentAndDiscarded(t, opened)
			require.Equal(t, tc.sentTo, sentTo)
			require.Equal(t, tc.discarded, discarded)
			answeredBy := opened[tc.answeredBy]
			for i, st := range opened {
				require.Equal(t, i != tc.answeredBy, st.ended(), "every stream but the one that answered is discarded (stream %d)", i)
			}

			if tc.hedges > 0 {
				var hedged map[string]any
				require.NoError(t, json.Unmarshal([]byte(logs.String()), &hedged))
				require.Equal(t, strings.Join(tc.sentTo, ","), hedged["streams"])
				require.Equal(t, strings.Join(tc.discarded, ","), hedged["discarded"])
				require.Equal(t, answeredBy.member, hedged["answered_by"])
			}

			ttl, err := s.keepAlive(ctx, id)
			require.NoError(t, err)
			require.Equal(t, int64(memberTTL), ttl)
			require.Len(t, fake.streams(), len(tc.script), "the next keep-alive on the stream that answered")
			require.Equal(t, 2, answeredBy.keepAlivesSent())

			s.close()
			for _, st := range fake.streams() {
				require.True(t, st.ended(), "close ends the stream that answered; every other had ended")
			}
		})
	}
}

// After a keep-alive that failed, the members its streams reached are
// suspect: the next keep-alive's first stream (a new one) that the
// balancer placed on one of them is closed unused and another opened, as
// a hedge's would be, up to maxOpensPerHedge (the last used whatever it
// reached). A keep-alive that is answered clears the suspects. No hedge
// fires in these cases: the first stream alone reaches another member.
func TestKeepAliveAfterFailureAvoidsItsMembers(t *testing.T) {
	live := func(member string) memberOpen { return memberOpen{member: member} }
	hung := func(member string) memberOpen { return memberOpen{member: member, hung: true} }
	type step int
	const (
		fail   step = iota // the keep-alive is sent, then its context ends
		answer             // the keep-alive is answered
		drop               // the stream that answered last is closed
	)
	tests := []struct {
		name   string
		script []memberOpen
		steps  []step
		// sentTo: the members keep-alives were sent to, in order;
		// discarded: those of the streams closed unused.
		sentTo, discarded []string
	}{
		{name: "the next first stream lands on the failed member: opened again, on another",
			script: []memberOpen{hung(memberA), hung(memberA), live(memberB)},
			steps:  []step{fail, answer},
			sentTo: []string{memberA, memberB}, discarded: []string{memberA}},
		{name: "one member: the last open is used",
			script: []memberOpen{hung(memberA), live(memberA), live(memberA), live(memberA), live(memberA)},
			steps:  []step{fail, answer},
			sentTo: []string{memberA, memberA}, discarded: []string{memberA, memberA, memberA}},
		{name: "an answer clears the suspects",
			script: []memberOpen{hung(memberA), live(memberB), live(memberA)},
			steps:  []step{fail, answer, drop, answer},
			sentTo: []string{memberA, memberB, memberA}},
		{name: "a second failure: both members avoided",
			script: []memberOpen{hung(memberA), hung(memberA), hung(memberB), hung(memberA), hung(memberB), live(memberC)},
			steps:  []step{fail, fail, answer},
			sentTo: []string{memberA, memberB, memberC}, discarded: []string{memberA, memberA, memberB}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newMemberStreams(tc.script...)
			close(fake.hedged)
			life, end := context.WithCancel(t.Context())
			defer end()
			s := &keepAliveStream{open: fake.LeaseKeepAlive, life: life, hedge: time.Hour, suspects: &memberSuspects{},
				hedgeAfter: func(time.Duration) <-chan time.Time { return nil }} // no hedge fires
			const id = clientv3.LeaseID(0x2e)
			bound, cancel := context.WithTimeout(t.Context(), 10*time.Second) // bounds the test only
			defer cancel()
			for i, st := range tc.steps {
				switch st {
				case fail:
					ctx, stop := context.WithCancel(bound)
					failed := make(chan error, 1)
					go func() {
						_, err := s.keepAlive(ctx, id)
						failed <- err
					}()
					select {
					case <-fake.sent:
					case <-bound.Done():
						t.Fatalf("step %d: the keep-alive was not sent", i)
					}
					stop()
					require.ErrorIs(t, <-failed, context.Canceled, "step %d", i)
				case answer:
					ttl, err := s.keepAlive(bound, id)
					require.NoError(t, err, "step %d", i)
					require.Equal(t, int64(memberTTL), ttl, "step %d", i)
					<-fake.sent
				case drop:
					s.close()
				}
			}
			opened := fake.streams()
			require.Len(t, opened, len(tc.script), "every scripted stream opened, no more")
			sentTo, discarded := sentAndDiscarded(t, opened)
			require.Equal(t, tc.sentTo, sentTo)
			require.Equal(t, tc.discarded, discarded)
			s.close()
			for i, st := range opened {
				require.True(t, st.ended(), "stream %d ended", i)
			}
		})
	}
}

// The suspects are the map's, not one stream's: a member a kept lease's
// keep-alive failed on is avoided by the next full renewal's stream (and
// by any other lease's) too.
func TestSuspectsAreSharedByTheMapsStreams(t *testing.T) {
	fake := newMemberStreams(memberOpen{member: memberA, hung: true}, memberOpen{member: memberA, hung: true}, memberOpen{member: memberB})
	close(fake.hedged)
	life, end := context.WithCancel(t.Context())
	defer end()
	shared := &memberSuspects{}
	stream := func() *keepAliveStream {
		return &keepAliveStream{open: fake.LeaseKeepAlive, life: life, hedge: time.Hour, suspects: shared,
			hedgeAfter: func(time.Duration) <-chan time.Time { return nil }} // no hedge fires
	}
	kept, once := stream(), stream()
	bound, cancel := context.WithTimeout(t.Context(), 10*time.Second) // bounds the test only
	defer cancel()

	ctx, stop := context.WithCancel(bound)
	failed := make(chan error, 1)
	go func() {
		_, err := kept.keepAlive(ctx, 0x3a)
		failed <- err
	}()
	<-fake.sent
	stop()
	require.ErrorIs(t, <-failed, context.Canceled)

	ttl, err := once.keepAlive(bound, 0x3b)
	require.NoError(t, err)
	require.Equal(t, int64(memberTTL), ttl)
	sentTo, discarded := sentAndDiscarded(t, fake.streams())
	require.Equal(t, []string{memberA, memberB}, sentTo)
	require.Equal(t, []string{memberA}, discarded)
	require.Empty(t, shared.list(), "the answer cleared the suspects")
	kept.close()
	once.close()
}
