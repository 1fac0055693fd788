package conformance

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSuiteScenarioRegistry checks the scenarios the suite adds: IDs in
// their own namespaces (never a catalogue's LS-, AUTH- or AC-), unique, in
// order, each with a title, a section and a body, and listed by Scenarios
// after the catalogues.
func TestSuiteScenarioRegistry(t *testing.T) {
	ids := regexp.MustCompile(`^(LSX|CW)-[0-9]{3}$`)
	own := append(lsxScenarios(), cwScenarios()...)
	seen := map[string]bool{}
	prev := ""
	for _, sc := range own {
		require.Regexp(t, ids, sc.ID)
		require.False(t, seen[sc.ID], "duplicate %s", sc.ID)
		seen[sc.ID] = true
		if prev != "" && prev[:2] == sc.ID[:2] {
			require.Less(t, prev, sc.ID, "in order")
		}
		prev = sc.ID
		require.NotEmpty(t, sc.Title, sc.ID)
		require.NotEmpty(t, sc.Section, sc.ID)
		require.NotNil(t, sc.Run, sc.ID)
	}
	require.Len(t, own, 5+13)
	all := Scenarios()
	for i, sc := range all {
		if i < len(all)-len(own) {
			require.NotRegexp(t, ids, sc.ID)
			continue
		}
		require.Equal(t, own[i-(len(all)-len(own))].ID, sc.ID)
	}
}
