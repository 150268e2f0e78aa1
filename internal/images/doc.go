// Package images holds what the agent knows of image pulls apart from the
// CRI calls themselves (which internal/runtime makes): the credentials a
// pod may pull with, and the reference rules that pick the pull policy.
//
// A Keyring is built from a pod's imagePullSecrets
// (kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg), or from the
// node's docker config file (NodeDockerConfigPaths), and matched
// as the kubelet's credential keyring matches: by registry host, glob
// patterns allowed in its labels (*.example.com), the port exactly, and a
// path prefix; the most specific entry first; Docker Hub's own entry for
// images of the default registry.
//
//	kr, err := images.KeyringFromSecrets(secrets)
//	for _, auth := range kr.Lookup("registry.example.com/team/app") {
//		// try a pull with auth; the first that succeeds wins
//	}
//
// PullRecords (pullrecords.go) remembers which credentials pulled each
// image, so that a pod uses a present image only with the right to it,
// as the kubelet's ensure-secret-pulled-images rule decides under its
// verification policy (VerifyPolicy).
package images
