package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// The tests in this file drive internal/runtime against the real
// containerd: every pod they create is killed (and checked gone) when the
// test ends.

var podSeq atomic.Int64

// newRuntime connects a Runtime to the test containerd; it is closed when
// the test ends.
func newRuntime(t testing.TB, mods ...func(*runtime.Options)) *runtime.Runtime {
	t.Helper()
	opts := runtime.Options{Endpoint: env.CRIEndpoint, LogRoot: env.LogRoot}
	if tt, ok := t.(*testing.T); ok {
		opts.Logger = testr.NewWithOptions(tt, testr.Options{Verbosity: 1})
	}
	for _, m := range mods {
		m(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt, err := runtime.New(ctx, opts)
	if err != nil {
		t.Fatalf("runtime.New: %v", err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// busyboxPod returns a pod with one busybox container "main" running
// script. Its UID is unique to this run.
func busyboxPod(name string, hostNetwork bool, script string) *corev1.Pod {
	grace := int64(2)
	uid := fmt.Sprintf("rt-%s-%d-%d", name, os.Getpid(), podSeq.Add(1))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid), Labels: map[string]string{"test": name}},
		Spec: corev1.PodSpec{
			HostNetwork:                   hostNetwork,
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{busybox("main", script)},
		},
	}
}

func busybox(name, script string) corev1.Container {
	return corev1.Container{
		Name:            name,
		Image:           env.BusyboxImage,
		ImagePullPolicy: corev1.PullNever, // no registry here: never try
		Command:         []string{"sh", "-c", script},
	}
}

// killAtEnd kills the pod when the test ends, at once, and fails the test
// if anything of it is left.
func killAtEnd(t testing.TB, rt *runtime.Runtime, pod *corev1.Pod) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.KillPod(ctx, nil, runtime.Pod{ID: pod.UID}, new(int64)); err != nil {
			t.Errorf("cleanup: KillPod: %v", err)
		}
		os.RemoveAll(rt.PodLogDir(pod))
	})
}

func podStatus(t testing.TB, rt *runtime.Runtime, uid types.UID) *runtime.PodStatus {
	t.Helper()
	st, err := rt.GetPodStatus(context.Background(), uid)
	if err != nil {
		t.Fatalf("GetPodStatus: %v", err)
	}
	return st
}

// syncUntil syncs the pod every 100 ms until done holds for its status,
// tolerating crash-loop back-off errors, and returns that status.
func syncUntil(t *testing.T, rt *runtime.Runtime, pod *corev1.Pod, what string, done func(*runtime.PodStatus) bool) *runtime.PodStatus {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := podStatus(t, rt, pod.UID)
		if done(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; status: %s", what, describe(st))
		}
		if _, err := rt.SyncPod(ctx, pod, nil, st, runtime.SyncHooks{}); err != nil && !errors.Is(err, runtime.ErrCrashLoopBackOff) {
			t.Fatalf("SyncPod: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitStatus polls (without syncing) until done holds.
func waitStatus(t *testing.T, rt *runtime.Runtime, uid types.UID, what string, done func(*runtime.PodStatus) bool) *runtime.PodStatus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := podStatus(t, rt, uid)
		if done(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; status: %s", what, describe(st))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describe(st *runtime.PodStatus) string {
	var parts []string
	for _, s := range st.Sandboxes {
		parts = append(parts, fmt.Sprintf("sandbox %.12s attempt %d %s", s.ID, s.Attempt, s.State))
	}
	for _, c := range st.Containers {
		parts = append(parts, fmt.Sprintf("%s#%d %.12s %s exit %d", c.Name, c.RestartCount, c.ID, c.State, c.ExitCode))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func state(name string, want runtime.ContainerState) func(*runtime.PodStatus) bool {
	return func(st *runtime.PodStatus) bool {
		c := st.LatestContainer(name)
		return c != nil && c.State == want
	}
}

// podCgroups lists the pod's cgroup directories in every hierarchy, in
// the QoS tree or the flat layout of earlier versions.
func podCgroups(t testing.TB, uid types.UID) []string {
	t.Helper()
	var out []string
	for _, parent := range []string{"nodeagent", "nodeagent/kubepods", "nodeagent/kubepods/*"} {
		for _, pattern := range []string{filepath.Join("/sys/fs/cgroup", "*", parent), filepath.Join("/sys/fs/cgroup", parent)} {
			dirs, err := filepath.Glob(filepath.Join(pattern, "pod"+string(uid)))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, dirs...)
		}
	}
	return out
}

// TestRuntimeSyncPod syncs a host-network and a pod-network pod to a
// running container, checks the labels and annotations containerd holds,
// then kills the pod and checks that its cgroups are gone.
func TestRuntimeSyncPod(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hostNetwork bool
	}{{"host-network", true}, {"pod-network", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rt := newRuntime(t)
			cri := env.CRI(t)
			pod := busyboxPod(tc.name, tc.hostNetwork, "echo hello from $POD_NAME; sleep 300")
			pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
			killAtEnd(t, rt, pod)

			res, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{})
			if err != nil {
				t.Fatalf("SyncPod: %v (actions %+v)", err, res.Actions)
			}
			st := podStatus(t, rt, pod.UID)
			main := st.LatestContainer("main")
			if main == nil || main.State != runtime.ContainerStateRunning {
				t.Fatalf("after SyncPod: %s, want main running", describe(st))
			}
			if !tc.hostNetwork && (len(st.IPs) == 0 || !strings.HasPrefix(st.IPs[0], "10.")) {
				t.Errorf("pod IPs = %v, want one from the CNI range", st.IPs)
			}
			if tc.hostNetwork && !st.Sandboxes[0].HostNetwork {
				t.Error("sandbox is not in the host network")
			}

			// What crictl shows: the kubelet's labels and annotations.
			sbs, err := cri.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
				LabelSelector: map[string]string{runtime.LabelPodUID: string(pod.UID)}}})
			if err != nil || len(sbs.Items) != 1 {
				t.Fatalf("sandboxes with the pod's UID label: %v, %v; want 1", sbs, err)
			}
			wantSBLabels := map[string]string{"test": tc.name, runtime.LabelPodName: tc.name,
				runtime.LabelPodNamespace: "default", runtime.LabelPodUID: string(pod.UID)}
			if got := sbs.Items[0].Labels; !equalMaps(got, wantSBLabels) {
				t.Errorf("sandbox labels = %v, want %v", got, wantSBLabels)
			}
			cs, err := cri.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: main.ID})
			if err != nil {
				t.Fatal(err)
			}
			wantLabels := map[string]string{runtime.LabelPodName: tc.name, runtime.LabelPodNamespace: "default",
				runtime.LabelPodUID: string(pod.UID), runtime.LabelContainerName: "main"}
			if got := cs.Status.Labels; !equalMaps(got, wantLabels) {
				t.Errorf("container labels = %v, want %v", got, wantLabels)
			}
			for k, want := range map[string]string{
				runtime.AnnotationContainerHash:          runtime.HashContainer(&pod.Spec.Containers[0]),
				runtime.AnnotationRestartCount:           "0",
				runtime.AnnotationTerminationGracePeriod: "2",
			} {
				if got := cs.Status.Annotations[k]; got != want {
					t.Errorf("annotation %s = %q, want %q", k, got, want)
				}
			}
			logPath := filepath.Join(rt.PodLogDir(pod), "main", "0.log")
			if cs.Status.LogPath != logPath {
				t.Errorf("log path = %q, want %q", cs.Status.LogPath, logPath)
			}
			waitFile(t, logPath, "hello from "+tc.name)

			cgroups := podCgroups(t, pod.UID)
			if len(cgroups) == 0 {
				t.Fatalf("no cgroup pod%s under /nodeagent in any hierarchy while the pod runs", pod.UID)
			}
			if err := rt.KillPod(ctx, pod, runtime.Pod{ID: pod.UID}, nil); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			if st := podStatus(t, rt, pod.UID); len(st.Sandboxes)+len(st.Containers) > 0 {
				t.Errorf("after KillPod: %s, want nothing", describe(st))
			}
			if left := podCgroups(t, pod.UID); len(left) > 0 {
				t.Errorf("cgroups left after KillPod: %v", left)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// waitFile waits until the file contains text.
func waitFile(t *testing.T, path, text string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), text) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %q, want it to contain %q", path, b, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
