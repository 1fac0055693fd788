package etcdobserve_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/observe/etcdobserve"
)

// With TraceGRPC, a dialed store's client traces every gRPC call (otelgrpc):
// an operation's calls become children of its etcd request spans.
func TestTraceGRPC(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	inst, err := etcdobserve.New(etcdobserve.Options{Registerer: prometheus.NewRegistry(), TracerProvider: tp, TraceGRPC: true})
	require.NoError(t, err)
	cfg := inst.Config(etcdstore.Config{Endpoints: strings.Split(os.Getenv(etcdtest.EnvSharedEndpoints), ","),
		Options: etcdstore.Options{Root: etcdtest.UniquePrefix(t)}})
	require.Len(t, cfg.DialOptions, 1)
	s, err := etcdstore.Dial(t.Context(), cfg)
	require.NoError(t, err)
	defer s.Close()

	storetest.Claim(t, t.Context(), s, "x", time.Minute)
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range spans.Ended() {
		byID[sp.SpanContext().SpanID().String()] = sp
	}
	var grpcUnderRequest int
	for _, sp := range spans.Ended() {
		if !strings.HasPrefix(sp.Name(), "etcdserverpb.") {
			continue
		}
		if parent, ok := byID[sp.Parent().SpanID().String()]; ok && strings.HasPrefix(parent.Name(), "etcd ") {
			grpcUnderRequest++
		}
	}
	require.Positive(t, grpcUnderRequest, "gRPC calls traced under the operation's etcd requests")
}
