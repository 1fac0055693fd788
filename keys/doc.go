// Package keys holds the pure codecs of the store: length-prefixed key
// segments, the "zla1:" authority key codec, routing-id hex, endpoint
// normalisation, and the etcd key layout. It depends on no other package of
// the module; package location wraps its errors into typed input errors.
package keys
