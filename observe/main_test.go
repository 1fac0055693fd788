package observe_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when any goroutine outlives them (TrackSession
// starts one per session).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
