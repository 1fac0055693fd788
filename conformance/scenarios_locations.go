package conformance

// locationScenarios returns the LS-… scenarios in catalogue order.
func locationScenarios() []Scenario { return nil }
