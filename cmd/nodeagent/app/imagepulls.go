package app

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/nodeagent/nodeagent/internal/images"
)

// ImagePulls are how many image pulls run at once, under the kubelet's
// flag names.
type ImagePulls struct {
	Serialize   bool
	MaxParallel int
	// VerifyPolicy and VerifyAllowlist say which present images a pod
	// must show its right to (images.VerifyPolicy).
	VerifyPolicy    string
	VerifyAllowlist []string
}

func (o *Options) addImagePullFlags(fs *pflag.FlagSet) {
	p := &o.ImagePulls
	fs.BoolVar(&p.Serialize, "serialize-image-pulls", p.Serialize, "pull one image at a time, as the kubelet does by default; false allows --max-parallel-image-pulls at once. Containers asking for the same image with the same credentials at once always share one pull")
	fs.IntVar(&p.MaxParallel, "max-parallel-image-pulls", p.MaxParallel, "with --serialize-image-pulls=false, the most image pulls at once (0: no bound)")
	fs.StringVar(&p.VerifyPolicy, "image-pull-credentials-verification-policy", p.VerifyPolicy,
		fmt.Sprintf("which present images a pod must show its right to before it uses them, as the kubelet's imagePullCredentialsVerificationPolicy: %v. An image the agent pulled with a pod's pull secret is then used by another pod only if it holds the same credentials; otherwise it pulls the image itself and the registry decides", images.VerifyPolicies))
	fs.StringSliceVar(&p.VerifyAllowlist, "preloaded-images-verification-allowlist", p.VerifyAllowlist,
		"with --image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages, the images every pod may use when present: fully qualified repositories (registry/path/name), or prefixes ending in /*")
}

// pullRecords opens the records of which credentials pulled each image,
// under the root dir, as the kubelet keeps them under its own.
func (o *Options) pullRecords() (*images.PullRecords, error) {
	return images.OpenPullRecords(filepath.Join(o.RootDir, "image-pull-records"), images.VerifyPolicy(o.ImagePulls.VerifyPolicy), o.ImagePulls.VerifyAllowlist)
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
	return errs
}
