//go:build !stress

package conformance

// stressBuild is false in an ordinary build: random runs default to the
// short length that make test affords.
const stressBuild = false
