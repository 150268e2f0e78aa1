package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestCheckUID(t *testing.T) {
	for _, uid := range []types.UID{"u1", "7f6b9c3e-2d4a-4c1b-9e8f-0a1b2c3d4e5f", "0123456789abcdef0123456789abcdef", types.UID(strings.Repeat("a", 128))} {
		if err := CheckUID(uid); err != nil {
			t.Errorf("CheckUID(%q) = %v, want nil", uid, err)
		}
	}
	for _, uid := range []types.UID{"", ".", "..", "../../etc", "/", "a/b", `a\b`, "a_b", "a b", "a\x00b", "a.b", types.UID(strings.Repeat("a", 129))} {
		if err := CheckUID(uid); !errors.Is(err, ErrInvalidIdentity) {
			t.Errorf("CheckUID(%q) = %v, want %v", uid, err, ErrInvalidIdentity)
		}
	}
}

// canary makes a directory tree that a removal must leave alone.
func canary(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func checkKept(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "sub")); err != nil {
			t.Errorf("%s: %v, want it kept", d, err)
		}
	}
}

// Sandboxes someone else made with crafted identity labels are not the
// agent's: it lists none of them, and collecting or killing them removes
// no log directory or cgroup outside its roots.
func TestCraftedLabelsReachNothingOutsideTheRoots(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	dir := filepath.Dir(w.logRoot)
	// Where the crafted identities below would lead the log directory
	// (<logs>/<ns>_<name>_<uid>) and the cgroup (<cgroup root>/pod<uid>).
	victims := []string{
		filepath.Join(dir, "victim_x_y"),
		filepath.Join(dir, "victim"),
		filepath.Join(w.cgroupFS, "victim"),
		filepath.Join(w.cgroupFS, "memory", "victim"),
	}
	for _, v := range victims {
		canary(t, v)
	}
	for _, id := range []map[string]string{
		{LabelPodNamespace: "../victim", LabelPodName: "x", LabelPodUID: "y"},
		{LabelPodNamespace: "default", LabelPodName: "web", LabelPodUID: "/../../victim"},
		{LabelPodNamespace: "default", LabelPodName: "../../victim", LabelPodUID: "u9"},
	} {
		sb, err := w.cri.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
			Metadata: &runtimeapi.PodSandboxMetadata{Name: id[LabelPodName], Namespace: id[LabelPodNamespace], Uid: id[LabelPodUID]},
			Labels:   id,
		}, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.cri.StopPodSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}

	pods, err := w.rt.GetPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 0 {
		t.Errorf("GetPods lists %d crafted pods, want none: %+v", len(pods), pods[0])
	}
	if err := w.rt.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		t.Errorf("GarbageCollect: %v", err)
	}
	zero := int64(0)
	err = w.rt.KillPod(ctx, nil, Pod{ID: "/../../victim", Name: "web", Namespace: "default"}, &zero)
	if !errors.Is(err, ErrKillPod) || !errors.Is(err, ErrInvalidIdentity) {
		t.Errorf("KillPod of a crafted UID = %v, want %v and %v", err, ErrKillPod, ErrInvalidIdentity)
	}
	for _, pod := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "../victim", Name: "x", UID: "y"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "/../../victim"}},
	} {
		if err := w.rt.RemovePodLogDir(pod); !errors.Is(err, ErrInvalidIdentity) {
			t.Errorf("RemovePodLogDir(%s/%s %s) = %v, want %v", pod.Namespace, pod.Name, pod.UID, err, ErrInvalidIdentity)
		}
		if _, err := w.rt.SyncPod(ctx, pod, nil, nil, SyncHooks{}); !errors.Is(err, ErrInvalidIdentity) {
			t.Errorf("SyncPod(%s/%s %s) = %v, want %v", pod.Namespace, pod.Name, pod.UID, err, ErrInvalidIdentity)
		}
	}
	checkKept(t, victims...)
}

// A pod's log directory that is a symlink is removed, not followed.
func TestRemovePodLogDirFollowsNoSymlink(t *testing.T) {
	w := newWorld(t)
	outside := filepath.Join(filepath.Dir(w.logRoot), "outside")
	canary(t, outside)
	if err := os.MkdirAll(w.logRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	pod := newPod()
	link := w.rt.PodLogDir(pod)
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := w.rt.RemovePodLogDir(pod); err != nil {
		t.Fatalf("RemovePodLogDir: %v", err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink is still there: %v", err)
	}
	checkKept(t, outside)
}
