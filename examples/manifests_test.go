// Package examples holds manifests a new user can read and run (make run
// runs every one of them); this test keeps them valid.
package examples

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The busybox image hack/containerd-up.sh imports (its tag is the version
// of Debian's busybox-static, which hack/run.sh substitutes if it differs);
// no registry is reachable, so the examples must use it and never pull.
const busybox = "localhost/nodeagent/busybox:1.35.0"

func TestManifestsAreValidStaticPods(t *testing.T) {
	paths, err := filepath.Glob("manifests/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no example manifests found (%v)", err)
	}
	names := map[string]string{}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pods, err := manifest.ParseManifest(data, manifest.ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: path})
			if err != nil {
				t.Fatalf("the strict parser refuses %s: %v", path, err)
			}
			for _, pod := range pods {
				if other, ok := names[pod.Name]; ok {
					t.Errorf("pod %s is defined by %s and %s", pod.Name, other, path)
				}
				names[pod.Name] = path
				for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
					if c.Image != busybox || c.ImagePullPolicy != corev1.PullNever {
						t.Errorf("container %s: image %s, pull policy %s; want %s, Never", c.Name, c.Image, c.ImagePullPolicy, busybox)
					}
				}
			}
		})
	}
}
