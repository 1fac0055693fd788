package etcdobserve_test

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/observe/etcdobserve"
	"github.com/zlink-systems/zlink-etcd/session"
)

// A process that uses the store serves /metrics, /livez and /readyz: the
// store's and the node's metrics on its own registry, and the health
// checks of etcd and of its session. (Pass a TracerProvider in Options to
// trace too.)
func Example() {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	inst, err := etcdobserve.New(etcdobserve.Options{Registerer: reg})
	if err != nil {
		panic(err)
	}
	store, err := etcdstore.Dial(ctx, inst.Config(etcdstore.Config{Endpoints: []string{"https://etcd:2379"}}))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	reg.MustRegister(etcdobserve.NewStatsCollector(store))

	node, err := observe.NewNodeMetrics(reg, observe.NodeOptions{})
	if err != nil {
		panic(err)
	}
	s, err := session.New(ctx, store, "node-7", session.Options{OnRenewal: node.OnRenewal})
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)
	node.TrackSession(s)

	probes, err := health.NewHandler(etcdobserve.StoreCheck(store), health.SessionCheck(s))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	probes.Install(mux)
	_ = http.ListenAndServe(":9090", mux)
}
