package inspect

import (
	"fmt"
	"slices"
	"strings"
)

// Section names one part of a snapshot.
type Section string

// Sections, in display order.
const (
	SectionMeshNodes        Section = "mesh-nodes"
	SectionClientServers    Section = "client-servers"
	SectionFanoutPublishers Section = "fanout-publishers"
	SectionPeers            Section = "peers"
	SectionSpots            Section = "spots"
	SectionActors           Section = "actors"
	SectionRoutes           Section = "routes"
	SectionOwnerLeases      Section = "leases"
	SectionAuthorities      Section = "authorities"
	SectionOther            Section = "other"
)

// AllSections returns every section in display order.
func AllSections() []Section {
	var out []Section
	for _, spec := range sectionSpecs() {
		out = append(out, spec.name)
	}
	return out
}

// sectionAliases are the other names a section answers to.
func sectionAliases() map[string]Section {
	return map[string]Section{
		"meshnodes": SectionMeshNodes, "nodes": SectionMeshNodes,
		"clientservers": SectionClientServers,
		"fanout":        SectionFanoutPublishers, "fanoutpublishers": SectionFanoutPublishers, "publishers": SectionFanoutPublishers,
		"owner-leases": SectionOwnerLeases, "owners": SectionOwnerLeases, "ownerleases": SectionOwnerLeases,
		"authority": SectionAuthorities,
	}
}

// ParseSections maps names (section names or their aliases, any case) to
// sections in display order; no names means every section.
func ParseSections(names []string) ([]Section, error) {
	if len(names) == 0 {
		return AllSections(), nil
	}
	want := map[Section]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		s := Section(n)
		if a, ok := sectionAliases()[n]; ok {
			s = a
		}
		if !slices.Contains(AllSections(), s) {
			return nil, fmt.Errorf("unknown section %q (sections: %s)", n, sectionList())
		}
		want[s] = true
	}
	var out []Section
	for _, s := range AllSections() {
		if want[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

// sectionList names every section, comma-separated.
func sectionList() string {
	var names []string
	for _, s := range AllSections() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}
