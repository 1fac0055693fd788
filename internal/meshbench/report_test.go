package meshbench_test

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/meshbench"
)

// update rewrites docs/scale.md's generated section from the results.
var update = flag.Bool("update", false, "rewrite the generated section of "+docPath+" from "+resultsPath)

// docPath is the document the results are rendered into.
const docPath = "../../docs/scale.md"

// The tables and charts of docs/scale.md are the rendering of
// docs/scale/results.json: nothing in them is typed by hand.
func TestScaleDoc(t *testing.T) {
	b, err := os.ReadFile(resultsPath)
	require.NoError(t, err)
	var rs []meshbench.Result
	require.NoError(t, json.Unmarshal(b, &rs))
	doc, err := os.ReadFile(docPath)
	require.NoError(t, err)
	want, err := meshbench.Splice(string(doc), meshbench.Render(rs))
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(docPath, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, string(doc), "%s does not show %s: run go test ./internal/meshbench/ -run TestScaleDoc -update", docPath, resultsPath)
}

func TestSplice(t *testing.T) {
	doc := "intro\n" + meshbench.BeginGenerated + "\n\nold\n" + meshbench.EndGenerated + "\nend\n"
	got, err := meshbench.Splice(doc, "new\n")
	require.NoError(t, err)
	require.Equal(t, "intro\n"+meshbench.BeginGenerated+"\n\nnew\n\n"+meshbench.EndGenerated+"\nend\n", got)
	gen, err := meshbench.Generated(got)
	require.NoError(t, err)
	require.Equal(t, "new\n\n", gen)
	_, err = meshbench.Splice("no markers", "x")
	require.ErrorIs(t, err, meshbench.ErrNoMarkers)
}

func TestRender(t *testing.T) {
	rs := []meshbench.Result{
		{Label: "after", Nodes: 10, Steady: meshbench.Steady{Rates: meshbench.Rates{Events: 1000}}},
		{Label: "before", Nodes: 10, Steady: meshbench.Steady{Rates: meshbench.Rates{Events: 9}}},
	}
	out := meshbench.Render(rs)
	require.Contains(t, out, "### N = 10\n\n| | before | after |\n")
	require.Contains(t, out, "| watch events delivered/s (etcd) | 9.00 | 1,000 |\n")
	// log10(1+9) / log10(1+1000) of the 50 columns: 17.
	require.Contains(t, out, "  before  N=10    "+strings.Repeat("#", 17)+strings.Repeat(" ", 33)+" 9.00\n")
	require.Contains(t, out, "  after   N=10    "+strings.Repeat("#", 50)+" 1,000\n")
}
