// Package conformance is the shared conformance suite of the zlink location
// store: every catalogue scenario (LS-…, AUTH-…), the scenarios the suite
// adds for provider authors (LSX-…: owner-lease reads after a change; CW-…:
// location.ChangeWatcher), and a model-based random tester, runnable against
// any location.Store.
//
// A store plugs in with a Harness: a factory for fresh isolated fixtures and
// a declaration of capabilities. Call Run from a test:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Harness{Name: "mystore", NewFixture: ..., Capabilities: ...})
//	}
//
// A harness that lacks a required field fails every scenario with an error
// naming it (Harness.Check, Fixture.Check). Renamer is the random tester's
// way to compare numbers a store chooses with the model's; a
// linearizability checker may use it too.
package conformance
