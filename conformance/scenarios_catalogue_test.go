package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// catalogue is what the catalogue documents say of one catalogue's registry.
type catalogue struct {
	name      string
	scenarios []Scenario
	// section starts every scenario's section name.
	section string
	// ids are the catalogue's scenario ids, in catalogue order.
	ids []string
	// tags are the tags that change how a scenario runs, by id: X (in-memory
	// only) and H:<hook> (an optional hook); untagged scenarios are absent.
	tags map[string]string
}

// catalogues are the location catalogue
// (conformance-scenarios-locations.md §4) and the authority catalogue
// (conformance-scenarios-authority.md).
func catalogues() []catalogue {
	return []catalogue{
		{
			name: "locations", scenarios: locationScenarios(), section: "LS ",
			ids: catalogueIDs("LS", [2]int{1, 22}, [2]int{30, 55}, [2]int{60, 76}, [2]int{80, 97},
				[2]int{100, 118}, [2]int{120, 135}, [2]int{140, 145}, [2]int{150, 158},
				[2]int{160, 167}, [2]int{170, 198}, [2]int{200, 209}),
			tags: map[string]string{
				"LS-007": "X H:SetOwnerLeaseCounter",
				"LS-019": "X",
				"LS-196": "H:MeshNodeChangeStamp",
				"LS-209": "X",
			},
		},
		{
			name: "authority", scenarios: authorityScenarios(), section: "AUTH ",
			ids: catalogueIDs("AUTH", [2]int{1, 228}),
			// [hook] scenarios need the authority counter hook; none is in-memory only.
			tags: map[string]string{
				"AUTH-059": "H:SetAuthorityCounters", "AUTH-060": "H:SetAuthorityCounters",
				"AUTH-094": "H:SetAuthorityCounters", "AUTH-107": "H:SetAuthorityCounters",
				"AUTH-125": "H:SetAuthorityCounters", "AUTH-179": "H:SetAuthorityCounters",
			},
		},
	}
}

// TestScenarioCatalogues checks each catalogue's registry against the
// catalogue documents.
func TestScenarioCatalogues(t *testing.T) {
	for _, cat := range catalogues() {
		t.Run(cat.name, func(t *testing.T) {
			requireRegistry(t, cat.scenarios, cat.section, cat.ids)
			requireTags(t, cat.scenarios, cat.tags)
		})
	}
}

// catalogueIDs returns prefix-NNN for every number of the inclusive ranges,
// in order.
func catalogueIDs(prefix string, ranges ...[2]int) []string {
	var ids []string
	for _, r := range ranges {
		for n := r[0]; n <= r[1]; n++ {
			ids = append(ids, fmt.Sprintf("%s-%03d", prefix, n))
		}
	}
	return ids
}

// requireRegistry checks that scenarios are exactly the catalogue's ids, in
// order, each with a title, a section whose name starts with section, a
// body and a subtest name of its own that starts with its id.
func requireRegistry(t *testing.T, scenarios []Scenario, section string, ids []string) {
	t.Helper()
	var got []string
	names := map[string]bool{}
	for _, sc := range scenarios {
		got = append(got, sc.ID)
		require.NotEmpty(t, sc.Title, sc.ID)
		require.True(t, strings.HasPrefix(sc.Section, section), "%s: section %q", sc.ID, sc.Section)
		require.NotNil(t, sc.Run, sc.ID)
		require.True(t, strings.HasPrefix(sc.Name(), sc.ID+"_"), sc.ID)
		require.False(t, names[sc.Name()], "duplicate subtest name %s", sc.Name())
		names[sc.Name()] = true
	}
	require.Equal(t, ids, got)
}

// requireTags checks that exactly the scenarios of want carry tags (X:
// in-memory only, H:<hook>: an optional hook), that a store without optional
// capabilities skips exactly those and says why, and that a store with every
// capability runs all.
func requireTags(t *testing.T, scenarios []Scenario, want map[string]string) {
	t.Helper()
	tagged := map[string]string{}
	for _, sc := range scenarios {
		var tags []string
		if sc.InMemoryOnly {
			tags = append(tags, "X")
		}
		for _, h := range sc.Needs {
			tags = append(tags, "H:"+string(h))
		}
		if len(tags) > 0 {
			tagged[sc.ID] = strings.Join(tags, " ")
		}
	}
	require.Equal(t, want, tagged)
	all := Capabilities{ExactNumbers: true, InMemorySemantics: true, OwnerLeaseCounterHook: true, AuthorityCounterHook: true, MeshNodeChangeStamp: true}
	for _, sc := range scenarios {
		reason := sc.skipReason(Capabilities{ExactNumbers: true})
		switch {
		case sc.InMemoryOnly:
			require.Contains(t, reason, "(tag X)", sc.ID)
		case len(sc.Needs) > 0:
			require.Contains(t, reason, string(sc.Needs[0]), sc.ID)
		default:
			require.Empty(t, reason, "%s: runs on a store without optional capabilities", sc.ID)
		}
		require.Empty(t, sc.skipReason(all), "%s: runs on a store with every capability", sc.ID)
	}
}
