package etcdtest_test

import (
	"context"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// A three-member cluster on free ports, for tests that need leader changes
// or member restarts (compiled, not run: it has no Output).
func ExampleStartCluster() {
	ctx := context.Background()
	c, err := etcdtest.StartCluster(ctx, 3, etcdtest.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = c.Close() }()
	client, err := c.Client()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = client.Close() }()
	if _, err := client.Put(ctx, "/example/key", "value"); err != nil {
		fmt.Println(err)
		return
	}
	leader := c.Members[c.Leader()]
	leader.Stop(true) // a hard stop: the others elect a new leader
	if err := leader.Restart(ctx); err != nil {
		fmt.Println(err)
	}
}
