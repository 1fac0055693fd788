package meshbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ErrScrape is wrapped by the errors of a failed metrics scrape.
var ErrScrape = errors.New("meshbench: scrape etcd metrics")

// etcdSample holds the etcd metrics the harness reads, summed over the
// members (proposals: the highest member's, every member commits the same
// ones).
type etcdSample struct {
	// Proposals: etcd_server_proposals_committed_total.
	Proposals float64
	// Events: etcd_debugging_mvcc_events_total, the watch events sent.
	Events float64
	// SentBytes and RecvBytes: etcd_network_client_grpc_{sent,received}_bytes_total.
	SentBytes, RecvBytes float64
	// Range and Txn: grpc_server_handled_total of those methods.
	Range, Txn float64
	// WatchMsgs: grpc_server_msg_sent_total{grpc_method="Watch"}.
	WatchMsgs float64
	// KeepAlives: grpc_server_msg_received_total{grpc_method="LeaseKeepAlive"}.
	KeepAlives float64
	// CPU: process_cpu_seconds_total; RSS: process_resident_memory_bytes.
	CPU, RSS float64
	// Watchers and WatchStreams: etcd_debugging_mvcc_watcher_total and
	// etcd_debugging_mvcc_watch_stream_total (gauges).
	Watchers, WatchStreams float64
}

// sub returns the counters' differences s − o (gauges keep s's value).
func (s etcdSample) sub(o etcdSample) etcdSample {
	return etcdSample{
		Proposals: s.Proposals - o.Proposals, Events: s.Events - o.Events,
		SentBytes: s.SentBytes - o.SentBytes, RecvBytes: s.RecvBytes - o.RecvBytes,
		Range: s.Range - o.Range, Txn: s.Txn - o.Txn, WatchMsgs: s.WatchMsgs - o.WatchMsgs,
		KeepAlives: s.KeepAlives - o.KeepAlives, CPU: s.CPU - o.CPU,
		RSS: s.RSS, Watchers: s.Watchers, WatchStreams: s.WatchStreams,
	}
}

// scraper reads the members' metrics endpoints.
type scraper struct {
	urls   []string
	client *http.Client
}

// scrapeTimeout bounds one member's scrape.
const scrapeTimeout = 10 * time.Second

// scrape reads every member's metrics; with no URLs it returns a zero
// sample.
func (s scraper) scrape(ctx context.Context) (etcdSample, error) {
	var total etcdSample
	for _, u := range s.urls {
		m, err := s.one(ctx, u)
		if err != nil {
			return etcdSample{}, err
		}
		total.Proposals = max(total.Proposals, m.Proposals)
		total.Events += m.Events
		total.SentBytes += m.SentBytes
		total.RecvBytes += m.RecvBytes
		total.Range += m.Range
		total.Txn += m.Txn
		total.WatchMsgs += m.WatchMsgs
		total.KeepAlives += m.KeepAlives
		total.CPU += m.CPU
		total.RSS += m.RSS
		total.Watchers += m.Watchers
		total.WatchStreams += m.WatchStreams
	}
	return total, nil
}

// one scrapes one member.
func (s scraper) one(ctx context.Context, url string) (etcdSample, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return etcdSample{}, fmt.Errorf("%w: %s: %w", ErrScrape, url, err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return etcdSample{}, fmt.Errorf("%w: %s: %w", ErrScrape, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return etcdSample{}, fmt.Errorf("%w: %s: HTTP %s", ErrScrape, url, resp.Status)
	}
	m, err := parseMetrics(resp.Body)
	if err != nil {
		return etcdSample{}, fmt.Errorf("%w: %s: %w", ErrScrape, url, err)
	}
	return m, nil
}

// seriesField is one series the harness reads and the field it adds to.
type seriesField struct {
	// name is the metric's name; method the grpc_method label it must
	// carry (empty: any).
	name, method string
	dst          *float64
}

// sampleSeries lists the series the harness reads into s.
func sampleSeries(s *etcdSample) []seriesField {
	return []seriesField{
		{"etcd_server_proposals_committed_total", "", &s.Proposals},
		{"etcd_debugging_mvcc_events_total", "", &s.Events},
		{"etcd_network_client_grpc_sent_bytes_total", "", &s.SentBytes},
		{"etcd_network_client_grpc_received_bytes_total", "", &s.RecvBytes},
		{"process_cpu_seconds_total", "", &s.CPU},
		{"process_resident_memory_bytes", "", &s.RSS},
		{"etcd_debugging_mvcc_watcher_total", "", &s.Watchers},
		{"etcd_debugging_mvcc_watch_stream_total", "", &s.WatchStreams},
		{"grpc_server_handled_total", "Range", &s.Range},
		{"grpc_server_handled_total", "Txn", &s.Txn},
		{"grpc_server_msg_sent_total", "Watch", &s.WatchMsgs},
		{"grpc_server_msg_received_total", "LeaseKeepAlive", &s.KeepAlives},
	}
}

// parseMetrics reads the series the harness uses from Prometheus's text
// exposition format (expfmt's parser).
func parseMetrics(r io.Reader) (etcdSample, error) {
	var m etcdSample
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return m, err
	}
	for _, series := range sampleSeries(&m) {
		for _, metric := range families[series.name].GetMetric() {
			if series.method == "" || labelValue(metric, "grpc_method") == series.method {
				*series.dst += sampleValue(metric)
			}
		}
	}
	return m, nil
}

// labelValue is the value of metric's label name ("" when it has none).
func labelValue(metric *dto.Metric, name string) string {
	for _, l := range metric.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sampleValue is the value of a counter, gauge or untyped sample.
func sampleValue(metric *dto.Metric) float64 {
	switch {
	case metric.Counter != nil:
		return metric.GetCounter().GetValue()
	case metric.Gauge != nil:
		return metric.GetGauge().GetValue()
	default:
		return metric.GetUntyped().GetValue()
	}
}
