// Package embedetcd starts in-process etcd members for tests and the demo.
package embedetcd

import (
	_ "github.com/stretchr/testify/require"
	_ "go.etcd.io/etcd/client/v3"
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "golang.org/x/sync/errgroup"
	_ "go.uber.org/zap"
)
