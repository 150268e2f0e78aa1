package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func parseOne(t *testing.T, data string, opts ParseOptions) *corev1.Pod {
	t.Helper()
	pods, err := ParseManifest([]byte(data), opts)
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	if len(pods) != 1 {
		t.Fatalf("ParseManifest gave %d pods, want 1", len(pods))
	}
	return pods[0]
}

var fileOpts = ParseOptions{NodeName: "Node1", Source: podtypes.FileSource, Origin: "/etc/manifests/web.yaml",
	Now: time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)}

func TestParseManifestMakesAStaticPod(t *testing.T) {
	pod := parseOne(t, podManifest("web", "nginx:1.27"), fileOpts)
	uid := string(pod.UID)
	if len(uid) != 32 || strings.Trim(uid, "0123456789abcdef") != "" {
		t.Errorf("UID %q is not 32 hex digits", uid)
	}
	got := map[string]any{
		"name":        pod.Name,
		"namespace":   pod.Namespace,
		"nodeName":    pod.Spec.NodeName,
		"annotations": pod.Annotations,
		"phase":       pod.Status.Phase,
		"tolerations": pod.Spec.Tolerations,
	}
	want := map[string]any{
		"name":      "web-node1", // the node name is lower-cased, as the kubelet does
		"namespace": "default",
		"nodeName":  "node1",
		"annotations": map[string]string{
			podtypes.ConfigSourceAnnotationKey:    "file",
			podtypes.ConfigHashAnnotationKey:      uid,
			podtypes.ConfigFirstSeenAnnotationKey: "2026-03-04T05:06:07.000000008Z",
			podtypes.ConfigOriginAnnotationKey:    "/etc/manifests/web.yaml", // where the pod came from travels with it
		},
		"phase":       corev1.PodPending,
		"tolerations": []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("static pod (-want +got):\n%s", diff)
	}
	if !podtypes.IsStaticPod(pod) || podtypes.IsMirrorPod(pod) {
		t.Errorf("IsStaticPod=%v IsMirrorPod=%v", podtypes.IsStaticPod(pod), podtypes.IsMirrorPod(pod))
	}
	http := parseOne(t, podManifest("web", "nginx:1.27"), ParseOptions{NodeName: "node1", Source: podtypes.HTTPSource, Origin: "http://x/"})
	if len(http.Spec.Tolerations) != 0 || http.Annotations[podtypes.ConfigSourceAnnotationKey] != "http" {
		t.Errorf("HTTP pod: tolerations %v, source %q; want none and http", http.Spec.Tolerations, http.Annotations[podtypes.ConfigSourceAnnotationKey])
	}
}

// The UID (and config hash) depends on what the pod is, not on how its
// manifest is spelled, and on where it comes from.
func TestStaticPodUIDIsStable(t *testing.T) {
	base := podManifest("web", "nginx:1.27")
	uidOf := func(data string, opts ParseOptions) types.UID { return parseOne(t, data, opts).UID }
	want := uidOf(base, fileOpts)

	same := map[string]string{
		"JSON":                 `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"main","image":"nginx:1.27"}]}}`,
		"comments and spacing": "# the web pod\napiVersion:   v1\nkind: Pod\n\nmetadata: {name: web}\nspec:\n  containers:\n    - image: nginx:1.27\n      name: main\n",
		"spelled-out defaults": `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  restartPolicy: Always
  dnsPolicy: ClusterFirst
  schedulerName: default-scheduler
  terminationGracePeriodSeconds: 30
  enableServiceLinks: true
  securityContext: {}
  tolerations: [{operator: Exists, effect: NoExecute}]
  containers:
  - name: main
    image: nginx:1.27
    imagePullPolicy: IfNotPresent
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
`,
		"server-owned fields": strings.Replace(base, "  name: web\n", "  name: web\n  uid: 6f1c0b9e-1234\n  resourceVersion: \"99\"\n  creationTimestamp: \"2020-01-01T00:00:00Z\"\n", 1) + "status:\n  phase: Running\n",
		"our own annotations": strings.Replace(base, "  name: web\n", "  name: web\n  annotations:\n    kubernetes.io/config.hash: forged\n    kubernetes.io/config.seen: whenever\n", 1),
	}
	for name, data := range same {
		if got := uidOf(data, fileOpts); got != want {
			t.Errorf("%s: UID %s, want %s", name, got, want)
		}
	}
	if got := uidOf(base, ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: fileOpts.Origin}); got != want {
		t.Errorf("node name case or the seen time changed the UID: %s, want %s", got, want)
	}

	differ := map[string]types.UID{
		"image":       uidOf(podManifest("web", "nginx:1.28"), fileOpts),
		"name":        uidOf(podManifest("web2", "nginx:1.27"), fileOpts),
		"a label":     uidOf(strings.Replace(base, "  name: web\n", "  name: web\n  labels: {a: b}\n", 1), fileOpts),
		"node":        uidOf(base, ParseOptions{NodeName: "node2", Source: podtypes.FileSource, Origin: fileOpts.Origin}),
		"file path":   uidOf(base, ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/etc/manifests/other.yaml"}),
		"http source": uidOf(base, ParseOptions{NodeName: "node1", Source: podtypes.HTTPSource, Origin: fileOpts.Origin}),
	}
	seen := map[types.UID]string{want: "base"}
	for name, uid := range differ {
		if other, dup := seen[uid]; dup {
			t.Errorf("changing the %s gave the UID of %s: %s", name, other, uid)
		}
		seen[uid] = name
	}
}

func TestParseManifestPodListAndDuplicates(t *testing.T) {
	list := `{"apiVersion":"v1","kind":"PodList","items":[
		{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i:1"}]}},
		{"metadata":{"name":"b","namespace":"kube-system"},"spec":{"containers":[{"name":"c","image":"i:1"}]}}]}`
	pods, err := ParseManifest([]byte(list), fileOpts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a-node1_default", "b-node1_kube-system"}, []string{podtypes.PodFullName(pods[0]), podtypes.PodFullName(pods[1])}); diff != "" {
		t.Errorf("full names (-want +got):\n%s", diff)
	}
	dup := strings.Replace(list, `"name":"b","namespace":"kube-system"`, `"name":"a"`, 1)
	_, err = ParseManifest([]byte(dup), fileOpts)
	if err == nil || !strings.Contains(err.Error(), "items[1].metadata.name") || !strings.Contains(err.Error(), "already used by items[0]") {
		t.Errorf("a list naming one pod twice: %v", err)
	}
}

// A manifest cannot claim another origin: the source's own replaces it.
func TestParseManifestRecordsItsOwnOrigin(t *testing.T) {
	forged := strings.Replace(podManifest("web", "nginx:1.27"), "metadata:\n", "metadata:\n  annotations:\n    nodeagent.io/config.origin: /etc/shadow\n", 1)
	pod := parseOne(t, forged, fileOpts)
	if got := podtypes.ConfigOrigin(pod); got != fileOpts.Origin {
		t.Errorf("origin = %q, want %q", got, fileOpts.Origin)
	}
}
