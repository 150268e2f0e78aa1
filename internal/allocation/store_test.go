package allocation

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func req(cpu, mem string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

func pod(app, sidecar corev1.ResourceRequirements) *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always, Resources: sidecar}},
			Containers:     []corev1.Container{{Name: "app", Resources: app}},
		},
	}
}

// A pod runs with what it was allocated until Allocate takes its new
// spec; the other resources of its spec are its spec's.
func TestApplyKeepsTheAllocationUntilAllocated(t *testing.T) {
	s, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	first := pod(req("200m", "64Mi"), req("50m", "16Mi"))
	if got := s.Apply(first); got != first {
		t.Error("a pod with no allocation is not run as its spec asks")
	}
	if err := s.Allocate(first); err != nil {
		t.Fatal(err)
	}
	resized := pod(req("300m", "96Mi"), req("60m", "16Mi"))
	resized.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
	app, init := s.Changed(resized)
	if len(app) != 1 || app[0] != "app" || len(init) != 1 || init[0] != "side" {
		t.Errorf("Changed = %v, %v; want [app], [side]", app, init)
	}
	run := s.Apply(resized)
	if c := run.Spec.Containers[0].Resources; c.Limits.Cpu().String() != "200m" || c.Requests.Memory().String() != "64Mi" ||
		c.Limits.StorageEphemeral().String() != "1Gi" {
		t.Errorf("app runs with %v, want 200m/64Mi as allocated and the spec's ephemeral-storage", c)
	}
	if c := run.Spec.InitContainers[0].Resources; c.Requests.Cpu().String() != "50m" {
		t.Errorf("the sidecar runs with %v, want 50m as allocated", c)
	}
	if resized.Spec.Containers[0].Resources.Limits.Cpu().String() != "300m" {
		t.Error("Apply changed the pod it was given")
	}
	plr := resized.DeepCopy()
	plr.Spec.Resources = &corev1.ResourceRequirements{Requests: req("1", "1Gi").Requests}
	if _, other := s.Changed(plr); len(other) != 2 || other[1] != podLevelName {
		t.Errorf("Changed of a pod-level resize: other = %v, want [side %s]", other, podLevelName)
	}
	if err := s.Allocate(resized); err != nil {
		t.Fatal(err)
	}
	if got := s.Apply(resized); got != resized {
		t.Error("a pod allocated as its spec asks is not run as it asks")
	}
}

// What was allocated and resized survives a restart (a new Open of the
// file); Remove forgets the pod there too.
func TestStoreSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "allocated-resources.json")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p := pod(req("200m", "64Mi"), req("50m", "16Mi"))
	if err := s.Allocate(p); err != nil {
		t.Fatal(err)
	}
	if err := s.SetResized(p.UID, "app", "c1", req("300m", "64Mi")); err != nil {
		t.Fatal(err)
	}
	s.SetPending(p.UID, Pending{Reason: "Deferred", Message: "m"})

	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Known(p.UID) {
		t.Fatal("the allocation is not read back")
	}
	if app, _ := again.Changed(pod(req("300m", "64Mi"), req("50m", "16Mi"))); len(app) != 1 {
		t.Errorf("after a restart Changed = %v, want [app]", app)
	}
	if r, ok := again.Resized(p.UID, "app", "c1"); !ok || r.Limits.Cpu().String() != "300m" {
		t.Errorf("after a restart Resized = %v, %v; want 300m", r, ok)
	}
	if got := again.Pending(p.UID); got != (Pending{}) {
		t.Errorf("a pending resize is remembered across a restart (%v): it is decided again", got)
	}
	if err := again.Remove(p.UID); err != nil {
		t.Fatal(err)
	}
	third, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if third.Known(p.UID) {
		t.Error("a removed pod is read back")
	}
}

func TestOpenRefusesWhatIsNotItsFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bad); err == nil {
		t.Error("a file that is not JSON is read")
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, maxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(big); err == nil {
		t.Error("a file over the size bound is read")
	}
}

func TestNilStoreRemembersNothing(t *testing.T) {
	var s *Store
	p := pod(req("200m", "64Mi"), req("50m", "16Mi"))
	if err := s.Allocate(p); err != nil || s.Known(p.UID) || s.Apply(p) != p {
		t.Error("a nil store holds an allocation")
	}
}

// Prune forgets, in memory and in the file, the pods it is not told to
// keep, with their pending resizes; the others stay.
func TestPruneForgetsWhatIsNotKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allocated-resources.json")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	gone, kept := pod(req("200m", "64Mi"), req("50m", "16Mi")), pod(req("100m", "32Mi"), req("50m", "16Mi"))
	kept.UID = "u2"
	for _, p := range []*corev1.Pod{gone, kept} {
		if err := s.Allocate(p); err != nil {
			t.Fatal(err)
		}
	}
	s.SetPending(gone.UID, Pending{Reason: "Deferred"})
	if err := s.Prune(func(uid types.UID) bool { return uid == kept.UID }); err != nil {
		t.Fatal(err)
	}
	if s.Known(gone.UID) || s.Pending(gone.UID) != (Pending{}) || !s.Known(kept.UID) {
		t.Errorf("after Prune: gone known %v, pending %v; kept known %v", s.Known(gone.UID), s.Pending(gone.UID), s.Known(kept.UID))
	}
	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Known(gone.UID) || !again.Known(kept.UID) {
		t.Errorf("read back after Prune: gone known %v, kept known %v", again.Known(gone.UID), again.Known(kept.UID))
	}
}

// A container made again (a restart: a new ID) takes the place of its
// predecessor's record, so that restarts do not grow the file; what the
// earlier container was given is not the new one's.
func TestResizedKeepsOneRecordPerContainer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allocated-resources.json")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p := pod(req("200m", "64Mi"), req("50m", "16Mi"))
	if err := s.Allocate(p); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"c1", "c2", "c3"} {
		if err := s.SetResized(p.UID, "app", id, req(fmt.Sprintf("%dm", 300+i), "64Mi")); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := s.Resized(p.UID, "app", "c1"); ok {
		t.Error("an earlier container's resize is taken for the newest one's")
	}
	if r, ok := s.Resized(p.UID, "app", "c3"); !ok || r.Limits.Cpu().String() != "302m" {
		t.Errorf("Resized(c3) = %v, %v; want 302m", r, ok)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"id"`); n != 1 {
		t.Errorf("the file holds %d resize records after three containers of one name, want 1:\n%s", n, raw)
	}
}
