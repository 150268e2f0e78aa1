package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/staging/manifest"
)

// agentWithTwoPods serves a fake agent running web (from a manifest of the
// setup's directory, so its spec can be read) and db, and returns the flag
// that points manifestctl at it.
func agentWithTwoPods(t *testing.T, s *testSetup) []string {
	t.Helper()
	path := filepath.Join(s.manifests, "web.yaml")
	if err := os.WriteFile(path, []byte(pod("web", "nginx:1.27")), 0o644); err != nil {
		t.Fatal(err)
	}
	pods, err := manifest.ReadManifestFile(path, parseOptions(testNode, path))
	if err != nil {
		t.Fatal(err)
	}
	db := wanted("db-uid")
	db.Name = "db-" + testNode
	fake := &fakeAgent{}
	fake.set(
		localapi.PodInfo{Pod: pods[0], WorkerPhase: "sync", Source: "file", Origin: path, ConfigHash: string(pods[0].UID),
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("containerd://w")}}},
		localapi.PodInfo{Pod: db, WorkerPhase: "sync", Source: "http", Status: corev1.PodStatus{Phase: corev1.PodPending}},
	)
	_, socket := serveAt(t, fake)
	return []string{"--local-api-socket", socket}
}

func TestGetJSONAndYAMLAreAV1ListOfPods(t *testing.T) {
	s := newSetup(t)
	agent := agentWithTwoPods(t, s)
	for _, format := range []string{"json", "yaml"} {
		code, out, errOut := s.run(append(agent, "get", "-o", format)...)
		if code != exitOK {
			t.Fatalf("get -o %s: exit %d, stderr %q", format, code, errOut)
		}
		var list struct {
			APIVersion string       `json:"apiVersion"`
			Kind       string       `json:"kind"`
			Items      []corev1.Pod `json:"items"`
		}
		if err := yaml.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("get -o %s: %v\n%s", format, err, out)
		}
		if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != 2 {
			t.Fatalf("get -o %s: %s %s with %d items, want a v1 List of 2:\n%s", format, list.APIVersion, list.Kind, len(list.Items), out)
		}
		web := list.Items[1]
		if web.Kind != "Pod" || web.APIVersion != "v1" || web.Name != "web-"+testNode || web.Status.Phase != corev1.PodRunning {
			t.Errorf("get -o %s: second item %s %s %s %s", format, web.APIVersion, web.Kind, web.Name, web.Status.Phase)
		}
		// The spec comes from the manifest the pod runs.
		if len(web.Spec.Containers) != 1 || web.Spec.Containers[0].Image != "nginx:1.27" || web.Spec.RestartPolicy != corev1.RestartPolicyAlways {
			t.Errorf("get -o %s: web's spec %+v, want the manifest's, defaulted", format, web.Spec)
		}
	}
	// One pod named: the Pod itself, as kubectl get pod NAME -o json.
	code, out, _ := s.run(append(agent, "get", "web", "-o", "json")...)
	var one corev1.Pod
	if err := json.Unmarshal([]byte(out), &one); code != exitOK || err != nil || one.Kind != "Pod" || one.Name != "web-"+testNode {
		t.Errorf("get web -o json: exit %d, %v, kind %q name %q", code, err, one.Kind, one.Name)
	}
}

func TestGetNameJSONPathAndCustomColumns(t *testing.T) {
	s := newSetup(t)
	agent := agentWithTwoPods(t, s)
	tmpl := s.write("names.jsonpath", "{range .items[*]}{.metadata.name}={.status.phase}{\"\\n\"}{end}\n")
	cols := s.write("cols.txt", "POD IMAGE\n.metadata.name .spec.containers[0].image\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "name"}, "pod/db-node1\npod/web-node1\n"},
		{[]string{"-o", "jsonpath={.items[*].metadata.name}"}, "db-node1 web-node1"},
		{[]string{"web", "-o", "jsonpath={.spec.containers[0].image}"}, "nginx:1.27"},
		{[]string{"-o", "jsonpath-file=" + tmpl}, "db-node1=Pending\nweb-node1=Running\n"},
		{[]string{"-o", "jsonpath-as-json={.items[*].metadata.name}"}, "[\n    \"db-node1\",\n    \"web-node1\"\n]\n"},
		{[]string{"-o", "custom-columns=NAME:.metadata.name,PHASE:status.phase,IP:.status.podIP"},
			"NAME        PHASE     IP\ndb-node1    Pending   <none>\nweb-node1   Running   <none>\n"},
		{[]string{"-o", "custom-columns=NAME:.metadata.name", "--no-headers"}, "db-node1\nweb-node1\n"},
		{[]string{"-o", "custom-columns-file=" + cols}, "POD         IMAGE\ndb-node1    <none>\nweb-node1   nginx:1.27\n"},
		{[]string{"--no-headers"}, "db-node1    0/0   Pending   0     <unknown>\nweb-node1   1/1   Running   0     <unknown>\n"},
	}
	for _, tt := range tests {
		code, out, errOut := s.run(append(append(agent, "get"), tt.args...)...)
		if code != exitOK || out != tt.want {
			t.Errorf("get %v: exit %d, stdout %q, stderr %q; want %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

func TestGetRefusesAnUnknownOrIncompleteFormatAsBadUsage(t *testing.T) {
	s := newSetup(t)
	huge := s.write("huge.jsonpath", "{.metadata.name}"+strings.Repeat(" ", maxTemplateFileBytes))
	for _, o := range []string{"xml", "jsonpath", "jsonpath={.items[", "custom-columns=NAME", "custom-columns-file=/nonexistent", "jsonpath-file=" + huge, "json=x", "wide=1"} {
		code, out, errOut := s.run("get", "-o", o)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "--output") {
			t.Errorf("get -o %s: exit %d, stdout %q, stderr %q; want exit %d naming --output", o, code, out, errOut, exitUsage)
		}
	}
}

func TestGetReportsRefusedManifestsOnStderrWithAFormat(t *testing.T) {
	s := newSetup(t)
	if err := os.WriteFile(filepath.Join(s.manifests, "bad.yaml"), []byte(pod("bad", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := s.run("get", "-o", "json")
	if code != exitOK || !strings.Contains(errOut, "Warning: manifest "+filepath.Join(s.manifests, "bad.yaml")+" is refused") || strings.Contains(out, "bad") {
		t.Errorf("get -o json: exit %d, stdout %q, stderr %q; want the refusal on stderr only", code, out, errOut)
	}
}
