package app

import (
	"strings"
	"testing"
)

func TestImagePullFlags(t *testing.T) {
	for args, want := range map[string]int{
		"":                              1, // serialized, as the kubelet
		"--serialize-image-pulls=false": 0,
		"--serialize-image-pulls=false --max-parallel-image-pulls=4": 4,
	} {
		o, err := parseArgs(t, append([]string{"--manifest-dir=/m"}, strings.Fields(args)...)...)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if got := o.ImagePulls.parallelPulls(); got != want {
			t.Errorf("%q: %d pulls at once, want %d", args, got, want)
		}
	}
	for args, want := range map[string]string{
		"--max-parallel-image-pulls=2":                                                                                          "needs --serialize-image-pulls=false",
		"--serialize-image-pulls=false --max-parallel-image-pulls=-1":                                                           "must not be negative",
		"--image-pull-credentials-verification-policy=Sometimes":                                                                `--image-pull-credentials-verification-policy, --preloaded-images-verification-allowlist: image pull credentials verification policy "Sometimes": not one of`,
		"--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages":                                             "needs an allowlist of images",
		"--preloaded-images-verification-allowlist=registry.example.com/a":                                                      "only for policy NeverVerifyAllowlistedImages",
		"--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages --preloaded-images-verification-allowlist=a": `"a" is not a fully qualified repository`,
	} {
		_, err := parseArgs(t, append([]string{"--manifest-dir=/m"}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
