// Package conformance is the shared conformance suite of the zlink location
// store: every catalogue scenario (LS-…, AUTH-…) and a model-based random
// tester, runnable against any location.Store.
//
// A store plugs in with a Harness: a factory for fresh isolated fixtures and
// a declaration of capabilities. Call Run from a test:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Harness{Name: "mystore", NewFixture: ..., Capabilities: ...})
//	}
package conformance
