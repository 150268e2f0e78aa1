package nodeapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

func TestRunningPods(t *testing.T) {
	w := newWorld(t, nil)
	w.rt.pods = []*runtime.Pod{
		{ID: "uid-1", Name: "web", Namespace: "default",
			Sandboxes: []runtime.Sandbox{{ID: "sb-1", State: runtime.SandboxReady}},
			Containers: []runtime.Container{
				{ID: "app-2", Name: "app", Image: "busybox:1", State: runtime.ContainerStateRunning},
				{ID: "app-1", Name: "app", Image: "busybox:1", State: runtime.ContainerStateExited},
			}},
		// Sandbox ready, nothing running yet: listed, with no containers.
		{ID: "uid-2", Name: "starting", Namespace: "default",
			Sandboxes: []runtime.Sandbox{{ID: "sb-2", State: runtime.SandboxReady}}},
		// Left behind, stopped: not running.
		{ID: "uid-3", Name: "old", Namespace: "kube-system",
			Sandboxes:  []runtime.Sandbox{{ID: "sb-3", State: runtime.SandboxNotReady}},
			Containers: []runtime.Container{{ID: "x-1", Name: "x", State: runtime.ContainerStateExited}}},
	}
	code, body := w.do("GET", "/runningpods/", "alice-token")
	var list corev1.PodList
	if err := json.Unmarshal([]byte(body), &list); code != http.StatusOK || err != nil {
		t.Fatalf("/runningpods/: %d %q (%v)", code, body, err)
	}
	want := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{UID: "uid-1", Name: "web", Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1"}}}},
		{ObjectMeta: metav1.ObjectMeta{UID: "uid-2", Name: "starting", Namespace: "default"}},
	}
	if list.Kind != "PodList" || list.APIVersion != "v1" {
		t.Errorf("/runningpods/ is a %s %s, want a v1 PodList", list.APIVersion, list.Kind)
	}
	if diff := cmp.Diff(want, list.Items); diff != "" {
		t.Errorf("/runningpods/ (-want +got):\n%s", diff)
	}
	w.authorizedAs("/runningpods/", "pods", "proxy")
}
