package conformance

// authorityScenarios returns the AUTH-… scenarios in catalogue order.
func authorityScenarios() []Scenario { return nil }
