package conformance

import (
	"strings"
	"unicode"
)

// Scenario is one scenario of the suite: a catalogue scenario, or one the
// suite adds (IDs LSX-… and CW-…, see docs/decisions.md).
type Scenario struct {
	// ID is the scenario id, e.g. "LS-001", "AUTH-012" or "CW-001".
	ID string
	// Title is the catalogue title; the subtest is named ID + "_" + a slug of it.
	Title string
	// Section is the catalogue section the scenario belongs to (for example
	// "LS B. Mesh-node descriptors"); reports group results by it. Empty
	// means the ID's prefix ("LS", "AUTH").
	Section string
	// InMemoryOnly marks scenarios tagged X (skipped unless the harness
	// declares InMemorySemantics).
	InMemoryOnly bool
	// Needs lists hooks the scenario requires (tag H / [hook]); the scenario
	// is skipped unless the harness declares each.
	Needs []Hook
	// Run performs the scenario on a fresh fixture.
	Run func(c *Case)
}

// catalogueSection is one section of a catalogue: its name, given once,
// and its scenarios in catalogue order (their Section left empty).
type catalogueSection struct {
	name      string
	scenarios []Scenario
}

// inSections returns the sections' scenarios in order, each with its
// section's name as Section.
func inSections(sections ...catalogueSection) []Scenario {
	var all []Scenario
	for _, sec := range sections {
		for _, s := range sec.scenarios {
			s.Section = sec.name
			all = append(all, s)
		}
	}
	return all
}

// Hook names an optional harness capability a scenario needs.
type Hook string

// Hooks.
const (
	HookOwnerLeaseCounter   Hook = "SetOwnerLeaseCounter"
	HookAuthorityCounters   Hook = "SetAuthorityCounters"
	HookMeshNodeChangeStamp Hook = "MeshNodeChangeStamp"
	// HookLeaseExpiryByClock: the scenario ends leases by moving the clock
	// (Capabilities.LeaseExpiryByClock).
	HookLeaseExpiryByClock Hook = "LeaseExpiryByClock"
)

// declared reports whether caps declare the hook.
func (h Hook) declared(caps Capabilities) bool {
	switch h {
	case HookOwnerLeaseCounter:
		return caps.OwnerLeaseCounterHook
	case HookAuthorityCounters:
		return caps.AuthorityCounterHook
	case HookMeshNodeChangeStamp:
		return caps.MeshNodeChangeStamp
	case HookLeaseExpiryByClock:
		return caps.leaseExpiryByClock()
	default:
		return false
	}
}

// Name is the subtest name: "LS-001_claim_issues_a_lease".
func (s Scenario) Name() string {
	var b strings.Builder
	b.WriteString(s.ID)
	b.WriteByte('_')
	lastUnderscore := true
	for _, r := range strings.ToLower(s.Title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			lastUnderscore = false
		} else if !lastUnderscore {
			b.WriteByte('_')
			lastUnderscore = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// skipReason returns why the scenario cannot run under caps, or "".
func (s Scenario) skipReason(caps Capabilities) string {
	if s.InMemoryOnly && !caps.InMemorySemantics {
		return "in-memory only (tag X): the store does not declare InMemorySemantics"
	}
	for _, h := range s.Needs {
		if !h.declared(caps) {
			return "needs the optional hook " + string(h) + ", which the harness does not declare"
		}
	}
	return ""
}

// Scenarios returns every scenario of the suite: the location and authority
// catalogues in catalogue order, then the scenarios the suite adds
// (LSX-…, CW-…).
func Scenarios() []Scenario {
	var all []Scenario
	all = append(all, locationScenarios()...)
	all = append(all, authorityScenarios()...)
	all = append(all, lsxScenarios()...)
	all = append(all, cwScenarios()...)
	return all
}
