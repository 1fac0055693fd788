package meshbench_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/meshbench"
)

// BenchmarkMesh runs the harness (a 5 s steady state) at each size on an
// embedded member with fsync on, and reports its figures as metrics: per
// second at steady state, per change for a join, seconds for the
// agreement after a join and after a rolling restart. An iteration is a
// whole run; the long runs with a real etcd process and a 60 s steady
// state are TestScale's (stress build tag) and zlinketcd bench mesh.
func BenchmarkMesh(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			opts := embeddedOptions(b, n, 5*time.Second)
			var res meshbench.Result
			for b.Loop() {
				var err error
				res, err = meshbench.Run(b.Context(), opts)
				require.NoError(b, err)
			}
			b.ReportMetric(res.Steady.Rates.Proposals, "proposals/s")
			b.ReportMetric(res.Steady.Rates.Events, "events/s")
			b.ReportMetric(res.Steady.Rates.Rows, "rows/s")
			b.ReportMetric(res.Steady.Rates.Reads, "reads/s")
			b.ReportMetric(res.Join.Excess.Events, "join-events")
			b.ReportMetric(res.Join.Excess.Rows, "join-rows")
			b.ReportMetric(res.Join.Converge.P99, "join-p99-s")
			b.ReportMetric(res.Rolling.Converge.P99, "rolling-p99-s")
		})
	}
}
