package config

import (
	"errors"
	"testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// FuzzDecodeManifest feeds the decoder and the whole parse arbitrary bytes.
// Neither may panic or hang; every failure is a *ManifestError naming its
// origin; every pod accepted is complete: a UID, bound to the node, with
// containers, marked static.
func FuzzDecodeManifest(f *testing.F) {
	for _, seed := range corpusSeeds(f) {
		f.Add(seed)
	}
	f.Add([]byte(goodPodJSON))
	f.Add([]byte(manifest("web", "nginx:1")))
	f.Add([]byte(`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`))
	opts := ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/fuzz.yaml"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := DecodeManifest(data); err != nil {
			var me *ManifestError
			if !errors.As(err, &me) || !errors.Is(err, ErrManifest) {
				t.Fatalf("DecodeManifest error %T %v is not a *ManifestError", err, err)
			}
		}
		pods, err := ParseManifest(data, opts)
		if err != nil {
			var me *ManifestError
			if !errors.As(err, &me) || me.Origin != "/fuzz.yaml" {
				t.Fatalf("ParseManifest error %T %v does not name its origin", err, err)
			}
			return
		}
		for _, p := range pods {
			if p.UID == "" || p.Spec.NodeName != "node1" || len(p.Spec.Containers) == 0 || !podtypes.IsStaticPod(p) {
				t.Fatalf("accepted an incomplete pod: %+v", p)
			}
		}
	})
}
