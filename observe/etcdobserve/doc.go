// Package etcdobserve instruments the etcd store (package etcdstore):
// every etcd request an operation sends, counted and traced as a child of
// the operation's span; every transaction attempt (contention, lost
// answers and how they were resolved); the store's read retries, watches
// and cache, read at scrape; an otelgrpc option for the etcd client; and
// the health check that etcd answers with a leader.
//
// Wiring, with the store-agnostic parts of package observe:
//
//	inst, err := etcdobserve.New(etcdobserve.Options{Registerer: reg, TracerProvider: tp})
//	store, err := etcdstore.Dial(ctx, inst.Config(cfg))   // or etcdstore.New(client, inst.StoreOptions(opts))
//	err = reg.Register(etcdobserve.NewStatsCollector(store))
//	checks := []health.Check{etcdobserve.StoreCheck(store)}
//
// Every metric and span is listed in docs/observability.md.
package etcdobserve
