package main

import (
	"encoding/json"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// envChildArgs, when set, makes the test binary run as the meshnode
// process with these arguments (a JSON array): the SIGTERM test runs the
// real main path in a child process without building another binary.
const envChildArgs = "MESHNODE_TEST_CHILD_ARGS"

// TestMain runs the package's tests with one embedded etcd member shared by
// the service tests, and fails them when any goroutine outlives them.
func TestMain(m *testing.M) {
	if raw := os.Getenv(envChildArgs); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			os.Stderr.WriteString("meshnode test child: bad " + envChildArgs + ": " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(runMain(args, os.Getenv, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(sharedMember{m})
}

// sharedMember runs the tests inside etcdtest.RunShared.
type sharedMember struct{ m *testing.M }

// Run implements goleak.TestingM.
func (s sharedMember) Run() int { return etcdtest.RunShared(s.m) }
