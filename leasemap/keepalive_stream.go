package leasemap

import (
	"context"
	"fmt"
	"sync"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// KeepAliveStreams opens etcd LeaseKeepAlive streams (pb.LeaseClient has
// the method; clientv3.RetryLeaseClient(client) is the client's own).
type KeepAliveStreams interface {
	LeaseKeepAlive(ctx context.Context, opts ...grpc.CallOption) (pb.Lease_LeaseKeepAliveClient, error)
}

// keepAliveStream renews one etcd lease on a long-lived LeaseKeepAlive
// stream: one request and its answer per renewal, one renewal at a time,
// so that an answer is always the answer to the request just sent. A
// renewal that fails or whose context ends discards the stream (an answer
// to it could otherwise arrive for the next request); the next renewal
// opens a new one. Measured against a KeepAliveOnce per renewal (which
// opens and closes a stream each time), it renews several times faster
// (docs/sessions.md).
type keepAliveStream struct {
	open func(ctx context.Context, opts ...grpc.CallOption) (pb.Lease_LeaseKeepAliveClient, error)
	// life bounds every stream: Close ends it.
	life context.Context

	mu     sync.Mutex
	stream pb.Lease_LeaseKeepAliveClient
	cancel context.CancelFunc
}

// keepAlive sends one keep-alive of id and returns the TTL etcd answered
// (0: the lease does not exist). ctx bounds the call (and the opening of a
// stream).
func (s *keepAliveStream) keepAlive(ctx context.Context, id clientv3.LeaseID) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, s.failed(ctx, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream == nil {
		sctx, cancel := context.WithCancel(s.life)
		stop := context.AfterFunc(ctx, cancel)
		stream, err := s.open(sctx)
		if !stop() || err != nil {
			cancel()
			return 0, s.failed(ctx, err)
		}
		s.stream, s.cancel = stream, cancel
	}
	stop := context.AfterFunc(ctx, s.cancel)
	err := s.stream.Send(&pb.LeaseKeepAliveRequest{ID: int64(id)})
	var resp *pb.LeaseKeepAliveResponse
	if err == nil {
		resp, err = s.stream.Recv()
	}
	if !stop() || err != nil {
		s.discard()
		return 0, s.failed(ctx, err)
	}
	if resp.ID != int64(id) {
		s.discard()
		return 0, fmt.Errorf("keep-alive stream answered lease %x for lease %x", resp.ID, int64(id))
	}
	return resp.TTL, nil
}

// failed returns the error of a renewal: the context's when it ended
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

// discard ends the current stream; s.mu is held.
func (s *keepAliveStream) discard() {
	if s.cancel != nil {
		s.cancel()
	}
	s.stream, s.cancel = nil, nil
}

// close ends the stream for good (its life context is cancelled by the
// caller).
func (s *keepAliveStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discard()
}
