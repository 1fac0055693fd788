//go:build !stress

package etcdstore_test

// stressBuild reports a build with the stress tag (make stress).
const stressBuild = false
