package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// authCatalogueIDs are the scenario IDs of conformance-scenarios-authority.md,
// in catalogue order.
func authCatalogueIDs() []string {
	return []string{
		"AUTH-001", "AUTH-002", "AUTH-003", "AUTH-004", "AUTH-005", "AUTH-006", "AUTH-007", "AUTH-008",
		"AUTH-009", "AUTH-010", "AUTH-011", "AUTH-012", "AUTH-013", "AUTH-014", "AUTH-015", "AUTH-016",
		"AUTH-017", "AUTH-018", "AUTH-019", "AUTH-020", "AUTH-021", "AUTH-022", "AUTH-023", "AUTH-024",
		"AUTH-025", "AUTH-026", "AUTH-027", "AUTH-028", "AUTH-029", "AUTH-030", "AUTH-031", "AUTH-032",
		"AUTH-033", "AUTH-034", "AUTH-035", "AUTH-036", "AUTH-037", "AUTH-038", "AUTH-039", "AUTH-040",
		"AUTH-041", "AUTH-042", "AUTH-043", "AUTH-044", "AUTH-045", "AUTH-046", "AUTH-047", "AUTH-048",
		"AUTH-049", "AUTH-050", "AUTH-051", "AUTH-052", "AUTH-053", "AUTH-054", "AUTH-055", "AUTH-056",
		"AUTH-057", "AUTH-058", "AUTH-059", "AUTH-060", "AUTH-061", "AUTH-062", "AUTH-063", "AUTH-064",
		"AUTH-065", "AUTH-066", "AUTH-067", "AUTH-068", "AUTH-069", "AUTH-070", "AUTH-071", "AUTH-072",
		"AUTH-073", "AUTH-074", "AUTH-075", "AUTH-076", "AUTH-077", "AUTH-078", "AUTH-079", "AUTH-080",
		"AUTH-081", "AUTH-082", "AUTH-083", "AUTH-084", "AUTH-085", "AUTH-086", "AUTH-087", "AUTH-088",
		"AUTH-089", "AUTH-090", "AUTH-091", "AUTH-092", "AUTH-093", "AUTH-094", "AUTH-095", "AUTH-096",
		"AUTH-097", "AUTH-098", "AUTH-099", "AUTH-100", "AUTH-101", "AUTH-102", "AUTH-103", "AUTH-104",
		"AUTH-105", "AUTH-106", "AUTH-107", "AUTH-108", "AUTH-109", "AUTH-110", "AUTH-111", "AUTH-112",
		"AUTH-113", "AUTH-114", "AUTH-115", "AUTH-116", "AUTH-117", "AUTH-118", "AUTH-119", "AUTH-120",
		"AUTH-121", "AUTH-122", "AUTH-123", "AUTH-124", "AUTH-125", "AUTH-126", "AUTH-127", "AUTH-128",
		"AUTH-129", "AUTH-130", "AUTH-131", "AUTH-132", "AUTH-133", "AUTH-134", "AUTH-135", "AUTH-136",
		"AUTH-137", "AUTH-138", "AUTH-139", "AUTH-140", "AUTH-141", "AUTH-142", "AUTH-143", "AUTH-144",
		"AUTH-145", "AUTH-146", "AUTH-147", "AUTH-148", "AUTH-149", "AUTH-150", "AUTH-151", "AUTH-152",
		"AUTH-153", "AUTH-154", "AUTH-155", "AUTH-156", "AUTH-157", "AUTH-158", "AUTH-159", "AUTH-160",
		"AUTH-161", "AUTH-162", "AUTH-163", "AUTH-164", "AUTH-165", "AUTH-166", "AUTH-167", "AUTH-168",
		"AUTH-169", "AUTH-170", "AUTH-171", "AUTH-172", "AUTH-173", "AUTH-174", "AUTH-175", "AUTH-176",
		"AUTH-177", "AUTH-178", "AUTH-179", "AUTH-180", "AUTH-181", "AUTH-182", "AUTH-183", "AUTH-184",
		"AUTH-185", "AUTH-186", "AUTH-187", "AUTH-188", "AUTH-189", "AUTH-190", "AUTH-191", "AUTH-192",
		"AUTH-193", "AUTH-194", "AUTH-195", "AUTH-196", "AUTH-197", "AUTH-198", "AUTH-199", "AUTH-200",
		"AUTH-201", "AUTH-202", "AUTH-203", "AUTH-204", "AUTH-205", "AUTH-206", "AUTH-207", "AUTH-208",
		"AUTH-209", "AUTH-210", "AUTH-211", "AUTH-212", "AUTH-213", "AUTH-214", "AUTH-215", "AUTH-216",
		"AUTH-217", "AUTH-218", "AUTH-219", "AUTH-220", "AUTH-221", "AUTH-222", "AUTH-223", "AUTH-224",
		"AUTH-225", "AUTH-226", "AUTH-227", "AUTH-228",
	}
}

// TestAuthorityScenarioRegistry checks that authorityScenarios lists every
// AUTH scenario of the catalogue once, in order, each with a title, a
// section and a body, and none of them in-memory only.
func TestAuthorityScenarioRegistry(t *testing.T) {
	requireRegistry(t, authorityScenarios(), "AUTH ", authCatalogueIDs())
	for _, sc := range authorityScenarios() {
		require.False(t, sc.InMemoryOnly, "%s: the authority catalogue has no in-memory-only scenario", sc.ID)
	}
}

// TestAuthorityScenarioHooks checks that exactly the [hook] scenarios need
// the authority counter hook, and that they are skipped without it.
func TestAuthorityScenarioHooks(t *testing.T) {
	hooked := map[string][]Hook{}
	for _, sc := range authorityScenarios() {
		if len(sc.Needs) > 0 {
			hooked[sc.ID] = sc.Needs
		}
	}
	want := []Hook{HookAuthorityCounters}
	require.Equal(t, map[string][]Hook{
		"AUTH-059": want, "AUTH-060": want, "AUTH-094": want,
		"AUTH-107": want, "AUTH-125": want, "AUTH-179": want,
	}, hooked)
	for _, sc := range authorityScenarios() {
		reason := sc.skipReason(Capabilities{})
		if len(sc.Needs) > 0 {
			require.Contains(t, reason, string(HookAuthorityCounters), sc.ID)
		} else {
			require.Empty(t, reason, sc.ID)
		}
	}
}
