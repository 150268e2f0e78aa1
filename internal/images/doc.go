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
// CredentialProviders are the node's credential provider plugins, the
// kubelet's (--image-credential-provider-config and -bin-dir): a
// CredentialProviderConfig (kubelet.config.k8s.io/v1), a file or a
// directory of them merged as the kubelet merges them, validated as the
// kubelet validates it, and the exec protocol of
// credentialprovider.kubelet.k8s.io/v1 for an image a provider's
// matchImages cover, its answer bounded in size and time, decoded
// strictly, its auth map's keys matched as a Keyring's locations, and
// cached by its cacheKeyType (Image, Registry, Global) for its
// cacheDuration or the provider's default. Service account tokens for
// plugins (tokenAttributes) are not implemented, and refused. The
// kubelet's metrics of the plugins (credprovider_metrics.go) time each
// run and count the failed ones by plugin_name, and show the config's
// hash.
//
//	kr, err := images.KeyringFromSecrets(secrets)
//	for _, auth := range kr.Lookup("registry.example.com/team/app") {
//		// try a pull with auth; the first that succeeds wins
//	}
//
// PullRecords (pullrecords.go) remembers which credentials pulled each
// image, so that a pod uses a present image only with the right to it,
// as the kubelet's ensure-secret-pulled-images rule decides under its
// verification policy (VerifyPolicy). Prune forgets the records of the
// images the runtime no longer holds (at the agent's start and after
// image garbage collection), so that an image that comes back is judged
// by how it came back.
package images
