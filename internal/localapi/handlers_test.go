package localapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func pod(ns, name, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
}

func webInfo() PodInfo {
	return PodInfo{
		Pod:         pod("default", "web-node1", "u1"),
		WorkerPhase: "sync",
		Source:      "file",
		ConfigHash:  "u1",
		Origin:      "/etc/nodeagent/manifests/web.yaml",
		Processes:   map[string]string{"containerd://c2": ProcessExited},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			PodIP:     "10.0.0.5",
			StartTime: &metav1.Time{Time: t0},
			InitContainerStatuses: []corev1.ContainerStatus{{
				Name:  "init",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: metav1.Time{Time: t0}}},
			}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:         "httpd",
				Image:        "busybox",
				ContainerID:  "containerd://c2",
				Ready:        true,
				RestartCount: 2,
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: t0}}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "Error", FinishedAt: metav1.Time{Time: t0},
				}},
			}, {
				Name:  "sidecar",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
			}},
		},
	}
}

func TestPodsListsEveryPodWithContainerStates(t *testing.T) {
	p := &fakeProvider{pods: []PodInfo{
		{Pod: pod("kube-system", "b-node1", "u2"), Source: "http", Status: corev1.PodStatus{Phase: corev1.PodPending}},
		webInfo(),
	}}
	c := serve(t, p)

	got, err := c.Pods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	zero, exit137 := int32(0), int32(137)
	start := t0
	want := []Pod{{
		Namespace: "default", Name: "web-node1", UID: "u1", Source: "file", ConfigHash: "u1",
		Origin: "/etc/nodeagent/manifests/web.yaml", WorkerPhase: "sync", Phase: "Running",
		PodIP: "10.0.0.5", StartTime: &start,
		InitContainers: []Container{{Name: "init", State: StateTerminated, Reason: "Completed", ExitCode: &zero, StartedAt: &start}},
		Containers: []Container{{
			Name: "httpd", Image: "busybox", ContainerID: "containerd://c2", State: StateRunning, Ready: true,
			RestartCount: 2, StartedAt: &start, Process: ProcessExited,
			LastTermination: &Termination{ExitCode: exit137, Reason: "Error", FinishedAt: &start},
		}, {
			Name: "sidecar", State: StateWaiting, Reason: "CrashLoopBackOff", Message: "back-off 10s",
		}},
	}, {
		Namespace: "kube-system", Name: "b-node1", UID: "u2", Source: "http", Phase: "Pending",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pods (-want +got):\n%s", diff)
	}
}

func TestPodsIsAnEmptyListWithoutPods(t *testing.T) {
	c := serve(t, &fakeProvider{})
	got, err := c.Pods(context.Background())
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Pods = %#v, %v; want an empty list", got, err)
	}
}

func TestPodReturnsThePodAndItsTimeline(t *testing.T) {
	tl := []TimelineEntry{{Time: t0, Kind: "config", Message: "ADD from file"}, {Time: t0.Add(time.Second), Kind: "runtime", Message: "started container httpd"}}
	p := &fakeProvider{pods: []PodInfo{webInfo()}, timelines: map[types.UID][]TimelineEntry{"u1": tl}}
	c := serve(t, p)

	got, err := c.Pod(context.Background(), "default", "web-node1")
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != "u1" || got.Origin != "/etc/nodeagent/manifests/web.yaml" {
		t.Errorf("Pod = %+v, want uid u1 from web.yaml", got.Pod)
	}
	if diff := cmp.Diff(tl, got.Timeline); diff != "" {
		t.Errorf("Timeline (-want +got):\n%s", diff)
	}
}

func TestPodPrefersTheGenerationStillSyncing(t *testing.T) {
	old, next := webInfo(), webInfo()
	old.WorkerPhase = "terminating"
	next.Pod = pod("default", "web-node1", "u9")
	next.WorkerPhase = "sync"
	c := serve(t, &fakeProvider{pods: []PodInfo{old, next}})

	got, err := c.Pod(context.Background(), "default", "web-node1")
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != "u9" {
		t.Errorf("Pod UID = %s, want u9 (the one not terminating)", got.UID)
	}
}

func TestPodUnknownIsNotFound(t *testing.T) {
	c := serve(t, &fakeProvider{pods: []PodInfo{webInfo()}})
	_, err := c.Pod(context.Background(), "default", "nope")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Pod(nope) error = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "default/nope") {
		t.Errorf("error %q does not name the pod", err)
	}
}

func TestManifestErrorsNameFileReasonAndField(t *testing.T) {
	bad := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: c\n    image: \"\"\n")
	_, perr := manifest.ParseManifest(bad, manifest.ParseOptions{NodeName: "n", Source: podtypes.FileSource, Origin: "/m/bad.yaml"})
	if perr == nil {
		t.Fatal("ParseManifest accepted a pod without an image")
	}
	p := &fakeProvider{
		files:   map[string]error{"/m/z.yaml": errors.New("permission denied"), "/m/bad.yaml": perr},
		url:     "http://cfg/pods",
		httpErr: fmt.Errorf("GET http://cfg/pods: %w", manifest.ErrFetch),
	}
	c := serve(t, p)

	got, err := c.ManifestErrors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := ManifestErrors{
		Files: []ManifestError{
			{Origin: "/m/bad.yaml", Reason: "Invalid", Fields: []string{"spec.containers[0].image"}, Message: perr.Error()},
			{Origin: "/m/z.yaml", Message: "permission denied"},
		},
		HTTP: &ManifestError{Origin: "http://cfg/pods", Message: "GET http://cfg/pods: manifest URL cannot be fetched"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ManifestErrors (-want +got):\n%s", diff)
	}
}

func TestManifestErrorsEmptyWhenAllIsWell(t *testing.T) {
	c := serve(t, &fakeProvider{url: "http://cfg/pods"})
	got, err := c.ManifestErrors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 0 || got.HTTP != nil {
		t.Errorf("ManifestErrors = %+v, want none", got)
	}
}

func TestHealthReportsReadiness(t *testing.T) {
	p := &fakeProvider{ready: errors.New("sources not seen: file")}
	c := serve(t, p)
	got, err := c.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (Health{Status: "ok", Ready: false, Error: "sources not seen: file"}); !cmp.Equal(got, want) {
		t.Errorf("Health = %+v, want %+v", got, want)
	}
	p.mu.Lock()
	p.ready = nil
	p.problems = []string{"checkpoint: 3 change(s) not written, retrying: disk full"}
	p.mu.Unlock()
	got, _ = c.Health(context.Background())
	if want := (Health{Status: "ok", Ready: true, Problems: p.problems}); !cmp.Equal(got, want) {
		t.Errorf("Health = %+v, want %+v", got, want)
	}
}

func TestUnknownEndpointIsAJSONNotFound(t *testing.T) {
	c := serve(t, &fakeProvider{})
	err := c.get(context.Background(), "/v2/things", new(struct{}))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no such endpoint") {
		t.Errorf("GET /v2/things error = %v, want a not-found naming the endpoint", err)
	}
}
