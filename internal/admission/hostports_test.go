package admission

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// hostPortPod is a file-source static pod whose one container asks for a
// host port.
func hostPortPod(name string, port int32, ip string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-node-1", Namespace: "default", UID: types.UID(name),
			Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox",
			Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: port, HostIP: ip, Protocol: corev1.ProtocolTCP}}}}},
	}
}

func TestHostPorts(t *testing.T) {
	a := NewHostPorts()
	first := hostPortPod("first", 8080, "")
	second := hostPortPod("second", 8080, "127.0.0.1")
	other := hostPortPod("other", 9090, "")
	plain := hostPortPod("plain", 0, "")
	plain.Spec.Containers[0].Ports = nil

	for _, pod := range []*corev1.Pod{first, other, plain} {
		if why, _ := a.Admit(pod); why != "" {
			t.Fatalf("%s refused: %s", pod.Name, why)
		}
	}
	why, firstTime := a.Admit(second)
	wantWhy := `host port 127.0.0.1:8080/TCP of container "main" is held by container "main" (8080/TCP) of pod default/first-node-1 (uid ` + string(first.UID) + `)`
	if !strings.HasPrefix(why, wantWhy) || !firstTime || !a.IsRefused(second.UID) {
		t.Fatalf("admit(second) = %q, %v; want a first refusal starting %q", why, firstTime, wantWhy)
	}
	if _, again := a.Admit(second); again {
		t.Error("the same refusal was reported as new")
	}
	// The next version of the first pod (same full name) is no conflict.
	next := first.DeepCopy()
	next.UID = "first-v2"
	if why, _ := a.Admit(next); why != "" {
		t.Errorf("the next version of a static pod refused: %s", why)
	}
	if got := a.heldOf(podtypes.FileSource); len(got) != 1 || got[0].UID != second.UID {
		t.Errorf("heldOf(file) = %v", got)
	}

	// While the first pods may run, their ports stay held.
	running := map[types.UID]bool{first.UID: true, next.UID: true, other.UID: true}
	a.Release(func(uid types.UID) bool { return running[uid] })
	if why, _ := a.Admit(second); why == "" {
		t.Fatal("admitted while the holder may still run")
	}
	delete(running, first.UID)
	delete(running, next.UID)
	a.Release(func(uid types.UID) bool { return running[uid] })
	if why, _ := a.Admit(second); why != "" || a.IsRefused(second.UID) {
		t.Fatalf("still refused after the holder stopped: %s", why)
	}
	// Now the second holds the port: the first, coming back, waits.
	if why, _ := a.Admit(first); why == "" || !strings.Contains(why, "second-node-1") {
		t.Errorf("admit(first) after the second took the port = %q", why)
	}
	if !a.Drop(first.UID) || a.IsRefused(first.UID) {
		t.Error("drop did not forget the held-back pod")
	}
}
