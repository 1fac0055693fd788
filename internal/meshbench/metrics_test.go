package meshbench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP etcd_server_proposals_committed_total The total number of consensus proposals committed.
# TYPE etcd_server_proposals_committed_total gauge
etcd_server_proposals_committed_total 42
etcd_debugging_mvcc_events_total 7
grpc_server_handled_total{grpc_code="OK",grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 10
grpc_server_handled_total{grpc_code="NotFound",grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 2
grpc_server_handled_total{grpc_code="OK",grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 3
grpc_server_msg_sent_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 5
grpc_server_msg_received_total{grpc_method="LeaseKeepAlive",grpc_service="etcdserverpb.Lease",grpc_type="bidi_stream"} 6
grpc_server_msg_received_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 99
process_cpu_seconds_total 1.5e+00
etcd_network_client_grpc_sent_bytes_total 1024 1700000000000
`
	m, err := parseMetrics(strings.NewReader(text))
	require.NoError(t, err)
	require.Equal(t, etcdSample{Proposals: 42, Events: 7, Range: 12, Txn: 3, WatchMsgs: 5, KeepAlives: 6, CPU: 1.5, SentBytes: 1024}, m)

	_, err = parseMetrics(strings.NewReader("etcd_debugging_mvcc_events_total x\n"))
	require.ErrorContains(t, err, `expected float as value, got "x"`)
}

func TestBar(t *testing.T) {
	tests := []struct {
		v, top float64
		want   int
	}{
		{0, 100, 0}, {100, 100, chartWidth}, {9, 99, chartWidth / 2}, {-1, 10, 0}, {5, 0, 0},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, bar(tc.v, tc.top), "bar(%v, %v)", tc.v, tc.top)
	}
}

func TestNum(t *testing.T) {
	tests := map[float64]string{0: "0", 0.1234: "0.123", 5: "5.00", 42.42: "42.4", 1234567.6: "1,234,568", -2500: "−2,500", 999.5: "1,000"}
	for v, want := range tests {
		require.Equal(t, want, num(v), "num(%v)", v)
	}
}
