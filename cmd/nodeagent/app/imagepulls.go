package app

import (
	"fmt"

	"github.com/spf13/pflag"
)

// ImagePulls are how many image pulls run at once, under the kubelet's
// flag names.
type ImagePulls struct {
	Serialize   bool
	MaxParallel int
}

func (o *Options) addImagePullFlags(fs *pflag.FlagSet) {
	p := &o.ImagePulls
	fs.BoolVar(&p.Serialize, "serialize-image-pulls", p.Serialize, "pull one image at a time, as the kubelet does by default; false allows --max-parallel-image-pulls at once. Containers asking for the same image with the same credentials at once always share one pull")
	fs.IntVar(&p.MaxParallel, "max-parallel-image-pulls", p.MaxParallel, "with --serialize-image-pulls=false, the most image pulls at once (0: no bound)")
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
	return errs
}
