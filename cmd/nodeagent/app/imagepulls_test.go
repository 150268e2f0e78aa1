package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
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
		"--image-credential-provider-config=/etc/cp.yaml":                                                                       "set both or neither",
		"--image-credential-provider-bin-dir=/usr/libexec/cp":                                                                   "set both or neither",
	} {
		_, err := parseArgs(t, append([]string{"--manifest-dir=/m"}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

func TestCredentialProviderFlags(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "cp.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseArgs(t, "--manifest-dir=/m", "--image-credential-provider-config="+config, "--image-credential-provider-bin-dir="+dir)
	if err != nil {
		t.Fatal(err)
	}
	// A config that does not validate stops the start, naming the flag.
	_, err = o.ImagePulls.newCredentialProviders(nil, logr.Discard())
	if err == nil || !strings.Contains(err.Error(), "--image-credential-provider-config: "+config) {
		t.Errorf("error %v, want one naming the flag and the file", err)
	}
	if cp, err := NewOptions().ImagePulls.newCredentialProviders(nil, logr.Discard()); cp != nil || err != nil {
		t.Errorf("without the flags: %v, %v; want no plugins", cp, err)
	}
}
