// Package etcdtest starts in-process etcd members for tests and the demo. It
// is importable by any module: adopters and provider authors use it to test
// against a real etcd (one member or a cluster) without writing their own
// setup against go.etcd.io/etcd/server/v3/embed.
//
// A member listens on free loopback ports (or a unix socket) and keeps its
// data in a temporary directory that Close removes. Timing is fast by default
// (10 ms heartbeat, 100 ms election timeout, so the server's minimum lease TTL
// is one second) and fsync is off unless asked for: these members are for
// tests and demos, never for data that must survive a crash.
//
//   - StartMember starts one member; StartCluster starts a cluster of several,
//     choosing every port before any member starts.
//   - RunShared, Connect and UniquePrefix let every test of one test binary
//     share a single member (started in TestMain) while keeping their keys
//     apart; Shared hands that run to a goroutine leak checker.
package etcdtest
