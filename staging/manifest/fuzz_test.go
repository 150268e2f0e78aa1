package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Each decoder and validator that takes outside input has a fuzz test:
// the manifest decoder (FuzzDecodeManifest) and validation
// (FuzzValidateStaticPod); staging/config fuzzes a file as the file source
// reads it and a body as the HTTP source fetches it, seeded with its
// bad-manifest corpus. None may panic or hang; every refusal is a
// *ManifestError naming its origin; every pod accepted is complete. YAML
// must read as sigs.k8s.io/yaml reads it. `go test` runs their seeds;
// hack/test-fuzz.sh fuzzes each for a bounded time.

// manifestSeeds are a few good manifests, also in UTF-16 and with a UTF-8
// byte-order mark, and YAML that is hard to read right.
func manifestSeeds() [][]byte {
	var seeds [][]byte
	good := []string{
		goodPodJSON,
		podManifest("web", "nginx:1"),
		unicodeManifest,
		`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {a: yes}}\nspec:\n  containers: [{name: c, image: i, ports: [{containerPort: 0x50}]}]\n",
		"apiVersion: v1\nkind: Pod\nmetadata: &m {name: web}\nspec:\n  containers: [{name: c, image: i, env: [{name: A, value: !!binary aGVsbG8=}]}]\n",
	}
	for _, g := range good {
		seeds = append(seeds, []byte(g), utf16Bytes(g, false), utf16Bytes(g, true), append([]byte("\uFEFF"), g...))
	}
	for _, y := range trickyYAML {
		seeds = append(seeds, []byte(y))
	}
	return seeds
}

// checkParsed checks what ParseManifest returned.
func checkParsed(t *testing.T, origin string, pods []*corev1.Pod, err error) {
	t.Helper()
	if err != nil {
		var me *ManifestError
		if !errors.As(err, &me) || !errors.Is(err, ErrManifest) || me.Origin != origin {
			t.Fatalf("error %T %v is not a *ManifestError naming %s", err, err, origin)
		}
		return
	}
	for _, p := range pods {
		if p.UID == "" || p.Spec.NodeName != testNode || len(p.Spec.Containers) == 0 || !podtypes.IsStaticPod(p) {
			t.Fatalf("accepted an incomplete pod: %+v", p)
		}
	}
}

func FuzzDecodeManifest(f *testing.F) {
	for _, seed := range manifestSeeds() {
		f.Add(seed)
	}
	opts := ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/fuzz.yaml"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := DecodeManifest(data); err != nil {
			var me *ManifestError
			if !errors.As(err, &me) || !errors.Is(err, ErrManifest) {
				t.Fatalf("DecodeManifest error %T %v is not a *ManifestError", err, err)
			}
		}
		if text, err := utf8Text(data); err == nil && len(data) <= MaxManifestBytes && !isJSONObject(text) {
			sameAsSigsYAML(t, text, false)
		}
		pods, err := ParseManifest(data, opts)
		checkParsed(t, opts.Origin, pods, err)
		// The same text in UTF-16 is the same manifest.
		if err != nil || !utf8.Valid(data) || bytes.HasPrefix(data, []byte("\uFEFF")) || 2*len(data)+2 > MaxManifestBytes {
			return
		}
		again, err := ParseManifest(utf16Bytes(string(data), true), opts)
		if err != nil || len(again) != len(pods) {
			t.Fatalf("as UTF-16: %d pods, %v; as UTF-8: %d pods", len(again), err, len(pods))
		}
		for i := range pods {
			if again[i].UID != pods[i].UID {
				t.Fatalf("as UTF-16, pod %d has UID %s, not %s", i, again[i].UID, pods[i].UID)
			}
		}
	})
}

// FuzzValidateStaticPod builds pods from fuzzed field values, so that
// every input reaches validation.
func FuzzValidateStaticPod(f *testing.F) {
	f.Add("web", "default", "main", "nginx:1", "data", "/data", "/var/lib/data", int32(80), int32(0), false, "Always", "PORT", "100m")
	f.Add("Web_", "kube-system", "", " i ", "d", "", "relative", int32(70000), int32(81), true, "Sometimes", "1BAD", "-1")
	f.Add("", "", "c", "i", "", "/x", "", int32(-1), int32(-1), false, "", "", "")
	f.Fuzz(func(t *testing.T, name, namespace, container, image, volume, mountPath, hostPath string,
		port, hostPort int32, hostNetwork bool, restart, envName, cpu string) {
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: corev1.PodSpec{
				HostNetwork:   hostNetwork,
				RestartPolicy: corev1.RestartPolicy(restart),
				Containers: []corev1.Container{{
					Name: container, Image: image,
					Ports:        []corev1.ContainerPort{{ContainerPort: port, HostPort: hostPort}},
					Env:          []corev1.EnvVar{{Name: envName, Value: "v"}},
					VolumeMounts: []corev1.VolumeMount{{Name: volume, MountPath: mountPath}},
				}},
				Volumes: []corev1.Volume{{Name: volume, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPath}}}},
			},
		}
		if q, err := resource.ParseQuantity(cpu); err == nil {
			pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: q}
		}
		data, err := json.Marshal(pod)
		if err != nil {
			t.Skip(err) // a value JSON cannot carry
		}
		opts := ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/fuzz.json"}
		pods, err := ParseManifest(data, opts)
		checkParsed(t, opts.Origin, pods, err)
		var me *ManifestError
		if errors.As(err, &me) {
			if me.Reason == ReasonInvalid && len(me.Fields) == 0 {
				t.Fatalf("an invalid pod with no field named: %v", err)
			}
			for _, fe := range me.Fields {
				if !strings.HasPrefix(fe.Field, "metadata") && !strings.HasPrefix(fe.Field, "spec") {
					t.Fatalf("a refusal names field %q, outside the pod: %v", fe.Field, err)
				}
			}
		}
		// Validation is a function of the manifest.
		again, err2 := ParseManifest(data, opts)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() || err == nil && again[0].UID != pods[0].UID {
			t.Fatalf("parsed twice: %v and %v", err, err2)
		}
	})
}
