//go:build stress

package conformance

// stressBuild is true in a build with the stress tag (make stress): random
// runs default to many more sequences.
const stressBuild = true
