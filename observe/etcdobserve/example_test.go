package etcdobserve_test

import (
	"context"
	"fmt"
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
	if err := serveNode(context.Background(), []string{"https://etcd:2379"}); err != nil {
		fmt.Println(err)
	}
}

func serveNode(ctx context.Context, endpoints []string) error {
	reg := prometheus.NewRegistry()
	inst, err := etcdobserve.New(etcdobserve.Options{Registerer: reg})
	if err != nil {
		return err
	}
	store, err := etcdstore.Dial(ctx, inst.Config(etcdstore.Config{Endpoints: endpoints}))
	if err != nil {
		return err
	}
	defer store.Close()
	if err := reg.Register(etcdobserve.NewStatsCollector(store)); err != nil {
		return err
	}

	node, err := observe.NewNodeMetrics(reg, observe.NodeOptions{})
	if err != nil {
		return err
	}
	s, err := session.New(ctx, store, "node-7", session.Options{OnRenewal: node.OnRenewal})
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	node.TrackSession(s)

	probes, err := health.NewHandler(etcdobserve.StoreCheck(store), health.SessionCheck(s))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	probes.Install(mux)
	return http.ListenAndServe(":9090", mux)
}
