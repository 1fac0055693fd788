package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lsCatalogueIDs are the scenario IDs of conformance-scenarios-locations.md
// §4, in catalogue order.
func lsCatalogueIDs() []string {
	return []string{
		"LS-001", "LS-002", "LS-003", "LS-004", "LS-005", "LS-006", "LS-007", "LS-008",
		"LS-009", "LS-010", "LS-011", "LS-012", "LS-013", "LS-014", "LS-015", "LS-016",
		"LS-017", "LS-018", "LS-019", "LS-020", "LS-021", "LS-022", "LS-030", "LS-031",
		"LS-032", "LS-033", "LS-034", "LS-035", "LS-036", "LS-037", "LS-038", "LS-039",
		"LS-040", "LS-041", "LS-042", "LS-043", "LS-044", "LS-045", "LS-046", "LS-047",
		"LS-048", "LS-049", "LS-050", "LS-051", "LS-052", "LS-053", "LS-054", "LS-055",
		"LS-060", "LS-061", "LS-062", "LS-063", "LS-064", "LS-065", "LS-066", "LS-067",
		"LS-068", "LS-069", "LS-070", "LS-071", "LS-072", "LS-073", "LS-074", "LS-075",
		"LS-076", "LS-080", "LS-081", "LS-082", "LS-083", "LS-084", "LS-085", "LS-086",
		"LS-087", "LS-088", "LS-089", "LS-090", "LS-091", "LS-092", "LS-093", "LS-094",
		"LS-095", "LS-096", "LS-097", "LS-100", "LS-101", "LS-102", "LS-103", "LS-104",
		"LS-105", "LS-106", "LS-107", "LS-108", "LS-109", "LS-110", "LS-111", "LS-112",
		"LS-113", "LS-114", "LS-115", "LS-116", "LS-117", "LS-118", "LS-120", "LS-121",
		"LS-122", "LS-123", "LS-124", "LS-125", "LS-126", "LS-127", "LS-128", "LS-129",
		"LS-130", "LS-131", "LS-132", "LS-133", "LS-134", "LS-135", "LS-140", "LS-141",
		"LS-142", "LS-143", "LS-144", "LS-145", "LS-150", "LS-151", "LS-152", "LS-153",
		"LS-154", "LS-155", "LS-156", "LS-157", "LS-158", "LS-160", "LS-161", "LS-162",
		"LS-163", "LS-164", "LS-165", "LS-166", "LS-167", "LS-170", "LS-171", "LS-172",
		"LS-173", "LS-174", "LS-175", "LS-176", "LS-177", "LS-178", "LS-179", "LS-180",
		"LS-181", "LS-182", "LS-183", "LS-184", "LS-185", "LS-186", "LS-187", "LS-188",
		"LS-189", "LS-190", "LS-191", "LS-192", "LS-193", "LS-194", "LS-195", "LS-196",
		"LS-197", "LS-198", "LS-200", "LS-201", "LS-202", "LS-203", "LS-204", "LS-205",
		"LS-206", "LS-207", "LS-208", "LS-209",
	}
}

// TestLocationScenarioRegistry checks that locationScenarios lists every LS
// scenario of the catalogue once, in order, each with a title, a section
// and a body.
func TestLocationScenarioRegistry(t *testing.T) {
	requireRegistry(t, locationScenarios(), "LS ", lsCatalogueIDs())
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

// TestLocationScenarioTags checks the tags that change how a scenario runs:
// X (in-memory only) and H (an optional hook).
func TestLocationScenarioTags(t *testing.T) {
	tagged := map[string]string{}
	for _, sc := range locationScenarios() {
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
	require.Equal(t, map[string]string{
		"LS-007": "X H:SetOwnerLeaseCounter",
		"LS-019": "X",
		"LS-196": "H:MeshNodeChangeStamp",
		"LS-209": "X",
	}, tagged)
	all := Capabilities{ExactNumbers: true, InMemorySemantics: true, OwnerLeaseCounterHook: true, AuthorityCounterHook: true, MeshNodeChangeStamp: true}
	for _, sc := range locationScenarios() {
		_, isTagged := tagged[sc.ID]
		require.Equal(t, isTagged, sc.skipReason(Capabilities{ExactNumbers: true}) != "", "%s: skipped on a store without optional capabilities", sc.ID)
		require.Empty(t, sc.skipReason(all), "%s: runs on a store with every capability", sc.ID)
	}
}
