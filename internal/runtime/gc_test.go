package runtime

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// crashLoop makes the pod's app container crash and restart n times.
func (w *world) crashLoop(pod *corev1.Pod, n int) {
	w.t.Helper()
	for range n {
		w.exit(w.containerID(string(pod.UID), "app"), 1, time.Second)
		w.clock.Step(10 * time.Minute)
		w.mustSync(pod)
	}
}

func (w *world) states(uid types.UID) []string {
	w.t.Helper()
	st, err := w.rt.GetPodStatus(context.Background(), uid)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, c := range st.Containers {
		out = append(out, c.Name+"#"+strconv.Itoa(c.RestartCount)+":"+string(c.State))
	}
	for _, s := range st.Sandboxes {
		out = append(out, "sandbox#"+strconv.Itoa(int(s.Attempt))+":"+string(s.State))
	}
	return out
}

func TestGarbageCollectKeepsTheNewestDead(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	w.crashLoop(pod, 3)
	if err := w.rt.GarbageCollect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"app#3:running", "app#2:exited", "sandbox#0:ready"}
	if diff := cmp.Diff(want, w.states("u1")); diff != "" {
		t.Errorf("after GC (-want +got):\n%s", diff)
	}
	// The restart count survives the collection.
	w.crashLoop(pod, 1)
	if got := w.lastContainerConfig().Annotations[AnnotationRestartCount]; got != "4" {
		t.Errorf("restart count after GC = %s, want 4", got)
	}
}

func TestGarbageCollectOldSandboxes(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withPolicy(corev1.RestartPolicyOnFailure))
	w.mustSync(pod)
	w.cri.Lock()
	for _, sb := range w.cri.Sandboxes {
		sb.State = 1 // SANDBOX_NOTREADY
	}
	w.cri.Unlock()
	w.mustSync(pod) // kills the old sandbox and container, runs attempt 1
	w.exit(w.containerID("u1", "app"), 0, time.Second)
	if err := w.rt.GarbageCollect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// The newest exited app container is the attempt-1 one; the attempt-0
	// container goes, and with it the last reason to keep sandbox 0.
	want := []string{"app#1:exited", "sandbox#1:ready"}
	if diff := cmp.Diff(want, w.states("u1")); diff != "" {
		t.Errorf("after GC (-want +got):\n%s", diff)
	}
}

func TestGarbageCollectDeletedPod(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	keep := newPod(func(p *corev1.Pod) { p.UID, p.Name = "u2", "other" })
	w.mustSync(pod)
	w.mustSync(keep)
	ctx := context.Background()
	// Stopped but not removed, as after a kill that failed halfway.
	if err := w.rt.stopPod(ctx, pod.UID, stopOptions{}); err != nil {
		t.Fatal(err)
	}
	logDir := w.rt.PodLogDir(pod)
	if _, err := os.Stat(logDir); err != nil {
		t.Fatalf("log dir: %v", err)
	}
	if err := w.rt.GarbageCollect(ctx, func(uid types.UID) bool { return uid == "u1" }); err != nil {
		t.Fatal(err)
	}
	if got := w.states("u1"); len(got) != 0 {
		t.Errorf("deleted pod: %v left, want nothing", got)
	}
	if _, err := os.Stat(logDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deleted pod's log dir: %v, want it removed", err)
	}
	if got := w.states("u2"); !cmp.Equal(got, []string{"app#0:running", "sandbox#0:ready"}) {
		t.Errorf("other pod: %v, want it untouched", got)
	}
}
