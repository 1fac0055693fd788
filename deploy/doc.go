// Package deploy holds no code: its tests check the Kubernetes manifests
// under kubernetes/ (strict decoding into the Kubernetes API types, the
// kustomize build, security invariants per workload) and that the images
// they name are the ones `make images` builds (images.mk). It is a module of
// its own so that the library's go.mod does not carry Kubernetes' modules.
package deploy
