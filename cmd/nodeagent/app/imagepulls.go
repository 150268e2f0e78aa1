package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/images"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// ImagePulls are how many image pulls run at once, who may use a present
// image, and the node's credential provider plugins, under the kubelet's
// flag names.
type ImagePulls struct {
	Serialize   bool
	MaxParallel int
	// VerifyPolicy and VerifyAllowlist say which present images a pod
	// must show its right to (images.VerifyPolicy).
	VerifyPolicy    string
	VerifyAllowlist []string

	CredentialProviderConfig string
	CredentialProviderBinDir string
}

func (o *Options) addImagePullFlags(fs *pflag.FlagSet) {
	p := &o.ImagePulls
	fs.BoolVar(&p.Serialize, "serialize-image-pulls", p.Serialize, "pull one image at a time, as the kubelet does by default; false allows --max-parallel-image-pulls at once. Containers asking for the same image with the same credentials at once always share one pull")
	fs.IntVar(&p.MaxParallel, "max-parallel-image-pulls", p.MaxParallel, "with --serialize-image-pulls=false, the most image pulls at once (0: no bound)")
	fs.StringVar(&p.VerifyPolicy, "image-pull-credentials-verification-policy", p.VerifyPolicy,
		fmt.Sprintf("which present images a pod must show its right to before it uses them, as the kubelet's imagePullCredentialsVerificationPolicy: %v. An image the agent pulled with a pod's pull secret is then used by another pod only if it holds the same credentials; otherwise it pulls the image itself and the registry decides", images.VerifyPolicies))
	fs.StringSliceVar(&p.VerifyAllowlist, "preloaded-images-verification-allowlist", p.VerifyAllowlist,
		"with --image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages, the images every pod may use when present: fully qualified repositories (registry/path/name), or prefixes ending in /*")
	fs.StringVar(&p.CredentialProviderConfig, "image-credential-provider-config", p.CredentialProviderConfig,
		"a CredentialProviderConfig file (kubelet.config.k8s.io/v1), or a directory of them (its *.json, *.yaml and *.yml files merged in lexical order, a provider name in one only): the credential provider plugins asked for the credentials of the images they match, after the pod's pull secrets and the node's docker config; needs --image-credential-provider-bin-dir")
	fs.StringVar(&p.CredentialProviderBinDir, "image-credential-provider-bin-dir", p.CredentialProviderBinDir,
		"the directory of the plugins --image-credential-provider-config names")
}

// pullRecords opens the records of which credentials pulled each image,
// under the root dir, as the kubelet keeps them under its own.
func (o *Options) pullRecords() (*images.PullRecords, error) {
	return images.OpenPullRecords(filepath.Join(o.RootDir, "image-pull-records"), images.VerifyPolicy(o.ImagePulls.VerifyPolicy), o.ImagePulls.VerifyAllowlist)
}

// prunePullRecords forgets the pulls recorded of the images the runtime no
// longer holds; called at the start, and after image garbage collection
// removed images. A failure is logged: the records stay until the next.
func prunePullRecords(rt *runtime.Runtime, log logr.Logger) func(context.Context) {
	return func(ctx context.Context) {
		n, err := rt.PrunePullRecords(ctx)
		if err != nil {
			log.Error(err, "Pruning the image pull records")
		}
		if n > 0 {
			log.Info("Pruned the pull records of images the runtime no longer holds", "records", n)
		}
	}
}

// newCredentialProviders reads the credential provider plugins' config;
// nil without one. Their metrics go into reg.
func (p ImagePulls) newCredentialProviders(reg metrics.KubeRegistry, log logr.Logger) (*images.CredentialProviders, error) {
	if p.CredentialProviderConfig == "" {
		return nil, nil
	}
	cp, err := images.NewCredentialProviders(images.CredentialProviderOptions{
		ConfigPath: p.CredentialProviderConfig,
		BinDir:     p.CredentialProviderBinDir,
		Logger:     log.WithName("credential-providers"),
		Metrics:    reg,
	})
	if err != nil {
		return nil, fmt.Errorf("--image-credential-provider-config: %w", err)
	}
	log.Info("Credential provider plugins", "providers", cp.String())
	return cp, nil
}

// parallelPulls is the runtime's bound on pulls at once: 1 when
// serialized, 0 for none.
func (p ImagePulls) parallelPulls() int {
	if p.Serialize {
		return 1
	}
	return p.MaxParallel
}

func (o *Options) validateImagePulls() []error {
	var errs []error
	p := o.ImagePulls
	if p.MaxParallel < 0 {
		errs = append(errs, fmt.Errorf("--max-parallel-image-pulls must not be negative, not %d", p.MaxParallel))
	}
	if p.Serialize && p.MaxParallel > 1 {
		errs = append(errs, fmt.Errorf("--max-parallel-image-pulls=%d needs --serialize-image-pulls=false (pulls are serialized by default)", p.MaxParallel))
	}
	if err := images.ValidateVerifyPolicy(images.VerifyPolicy(p.VerifyPolicy), p.VerifyAllowlist); err != nil {
		errs = append(errs, fmt.Errorf("--image-pull-credentials-verification-policy, --preloaded-images-verification-allowlist: %w", err))
	}
	if (p.CredentialProviderConfig == "") != (p.CredentialProviderBinDir == "") {
		errs = append(errs, fmt.Errorf("--image-credential-provider-config and --image-credential-provider-bin-dir go together: set both or neither"))
	}
	return errs
}
