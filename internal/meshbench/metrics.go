package meshbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
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

// parseMetrics reads the series the harness uses from Prometheus's text
// exposition format.
func parseMetrics(r io.Reader) (etcdSample, error) {
	var m etcdSample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := cutLast(line)
		if !ok {
			continue
		}
		name, labels, _ := strings.Cut(series, "{")
		var dst *float64
		switch name {
		case "etcd_server_proposals_committed_total":
			dst = &m.Proposals
		case "etcd_debugging_mvcc_events_total":
			dst = &m.Events
		case "etcd_network_client_grpc_sent_bytes_total":
			dst = &m.SentBytes
		case "etcd_network_client_grpc_received_bytes_total":
			dst = &m.RecvBytes
		case "process_cpu_seconds_total":
			dst = &m.CPU
		case "process_resident_memory_bytes":
			dst = &m.RSS
		case "etcd_debugging_mvcc_watcher_total":
			dst = &m.Watchers
		case "etcd_debugging_mvcc_watch_stream_total":
			dst = &m.WatchStreams
		case "grpc_server_handled_total":
			switch {
			case strings.Contains(labels, `grpc_method="Range"`):
				dst = &m.Range
			case strings.Contains(labels, `grpc_method="Txn"`):
				dst = &m.Txn
			}
		case "grpc_server_msg_sent_total":
			if strings.Contains(labels, `grpc_method="Watch"`) {
				dst = &m.WatchMsgs
			}
		case "grpc_server_msg_received_total":
			if strings.Contains(labels, `grpc_method="LeaseKeepAlive"`) {
				dst = &m.KeepAlives
			}
		}
		if dst == nil {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return m, fmt.Errorf("series %s: value %q: %w", series, value, err)
		}
		*dst += v
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	return m, nil
}

// cutLast splits a sample line into its series and value (an optional
// timestamp after the value is dropped).
func cutLast(line string) (series, value string, ok bool) {
	// Label values may hold spaces: the series ends at the closing brace.
	end := strings.LastIndexByte(line, '}')
	rest := line
	if end >= 0 {
		series, rest = line[:end+1], line[end+1:]
	} else {
		i := strings.IndexByte(line, ' ')
		if i < 0 {
			return "", "", false
		}
		series, rest = line[:i], line[i:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", "", false
	}
	return series, fields[0], true
}
