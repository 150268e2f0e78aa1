package config

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestSeenAllSources(t *testing.T) {
	m := NewMerger(MergerOptions{})
	check := func(when string, want map[string]bool) {
		t.Helper()
		got := map[string]bool{
			"none":     m.SeenAllSources(),
			"file":     m.SeenAllSources(file),
			"file+api": m.SeenAllSources(file, api),
			"all":      m.SeenAllSources(podtypes.AllSource),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: SeenAllSources (-want +got):\n%s", when, diff)
		}
	}
	check("at first", map[string]bool{"none": true, "file": false, "file+api": false, "all": false})
	mustMerge(t, m, op(podtypes.ADD, file, testPod("a", "ua")))
	check("after an ADD", map[string]bool{"none": true, "file": false, "file+api": false, "all": false})
	mustMerge(t, m, set(file))
	check("after the file SET", map[string]bool{"none": true, "file": true, "file+api": false, "all": false})
	mustMerge(t, m, set(api))
	check("after the api SET", map[string]bool{"none": true, "file": true, "file+api": true, "all": false})
	mustMerge(t, m, set(web))
	check("after every SET", map[string]bool{"none": true, "file": true, "file+api": true, "all": true})
}

func TestMergerStampsConfigSeenOnceAndKeepsIt(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	m := NewMerger(MergerOptions{Clock: clk, Buffer: 10})
	mustMerge(t, m, set(api, testPod("a", "ua")))
	first := next(t, m.Updates()).Pods[0].Annotations[podtypes.ConfigFirstSeenAnnotationKey]
	if first != "2026-05-01T12:00:00Z" {
		t.Fatalf("config.seen on ADD = %q, want the clock's time", first)
	}
	clk.SetTime(clk.Now().Add(time.Hour))
	mustMerge(t, m, set(api, testPod("a", "ua", withImage("img:2"))))
	u := next(t, m.Updates())
	if got := u.Pods[0].Annotations[podtypes.ConfigFirstSeenAnnotationKey]; u.Op != podtypes.UPDATE || got != first {
		t.Fatalf("after an update: %s with config.seen %q, want UPDATE keeping %q", u.Op, got, first)
	}
	if got := u.Pods[0].Annotations[podtypes.ConfigSourceAnnotationKey]; got != "api" {
		t.Errorf("config.source = %q, want api", got)
	}
}

func TestMergerHandsOutCopies(t *testing.T) {
	m := NewMerger(MergerOptions{Buffer: 10})
	mustMerge(t, m, set(api, testPod("a", "ua")))
	got := next(t, m.Updates()).Pods[0]
	got.Spec.Containers[0].Image = "mutated"
	got.Labels = map[string]string{"mutated": "yes"}
	if p := m.Pods()[0]; p.Spec.Containers[0].Image != "img:1" || p.Labels != nil {
		t.Fatalf("a receiver's change leaked into the merger: %+v", p)
	}
	// And the unchanged pod is still unchanged.
	mustMerge(t, m, set(api, testPod("a", "ua")))
	if out := drain(m.Updates()); len(out) != 0 {
		t.Fatalf("re-sending the same pod produced %v", out)
	}
}

func TestMergerRejectsBadUpdates(t *testing.T) {
	m := NewMerger(MergerOptions{})
	for _, u := range []podtypes.PodUpdate{
		{Op: podtypes.SET, Source: podtypes.AllSource},
		{Op: podtypes.SET, Source: "ftp"},
		{Op: podtypes.Op(42), Source: file},
	} {
		if err := m.Merge(context.Background(), u); !errors.Is(err, ErrBadUpdate) {
			t.Errorf("Merge(%v %q) = %v, want ErrBadUpdate", u.Op, u.Source, err)
		}
	}
	if m.SeenAllSources(file) {
		t.Error("a rejected update marked a source seen")
	}
}

func TestMergerReportsAndListsRefusals(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	reg := metrics.NewKubeRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMerger(MergerOptions{Buffer: 10, Recorder: rec, Metrics: met})
	mustMerge(t, m, set(api, testPod("a", "ua")))
	mustMerge(t, m, set(file, testPod("a", "file-ua"), testPod("nouid", "")))

	want := []Refusal{{
		Source: file, FullName: "a_default", UID: "file-ua", Reason: manifest.ReasonDuplicate,
		Message: "pod a_default (uid file-ua) from source file refused: its full name is already used by pod ua from source api",
	}}
	if diff := cmp.Diff(want, m.Refused()); diff != "" {
		t.Errorf("Refused() (-want +got):\n%s", diff)
	}
	events := []string{<-rec.Events, <-rec.Events}
	if !strings.Contains(events[0], "FailedValidation") || !strings.Contains(events[0], "already used by pod ua") ||
		!strings.Contains(events[1], "it has no UID") {
		t.Errorf("events = %q", events)
	}
	counts, err := testutil.GetCounterValuesFromGatherer(reg, "nodeagent_config_manifests_refused_total", map[string]string{"source": "file"}, "reason")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"DuplicateName": 1, "Invalid": 1}, counts); diff != "" {
		t.Errorf("refusal counts (-want +got):\n%s", diff)
	}
	updates, err := testutil.GetCounterValuesFromGatherer(reg, "nodeagent_config_updates_total", map[string]string{"op": "ADD"}, "source")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"api": 1, "file": 1}, updates); diff != "" {
		t.Errorf("ADD updates by source (-want +got):\n%s", diff)
	}

	mustMerge(t, m, op(podtypes.REMOVE, api, testPod("a", "ua")))
	if got := m.Refused(); len(got) != 0 {
		t.Errorf("after the holder left, Refused() = %v, want none", got)
	}
}

func TestMergeEndsWithItsContext(t *testing.T) {
	m := NewMerger(MergerOptions{Buffer: 1})
	mustMerge(t, m, set(file)) // fills the channel
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Merge(ctx, podtypes.PodUpdate{Op: podtypes.SET, Source: api}) }()

	// While Merge waits for the receiver, queries still answer.
	deadline := time.After(10 * time.Second)
	for !m.SeenAllSources(api) {
		select {
		case <-deadline:
			t.Fatal("the api SET was not applied while its delivery waited")
		case <-time.After(time.Millisecond):
		}
	}
	_ = m.Pods()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Merge = %v, want context.Canceled", err)
	}
}

// A refused static pod has no API object: its event is about the Node, and
// names the manifest it came from; a refused API pod's is about the pod.
func TestMergerRecordsStaticRefusalsOnTheNode(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	rec.IncludeObject = true
	m := NewMerger(MergerOptions{Buffer: 10, Recorder: rec, NodeName: "node1"})
	mustMerge(t, m, set(api, testPod("a", "ua")))
	dup := testPod("a", "file-ua")
	dup.Annotations = map[string]string{podtypes.ConfigOriginAnnotationKey: "/etc/manifests/a.yaml"}
	mustMerge(t, m, set(file, dup))
	mustMerge(t, m, set(api, testPod("a", "ua"), testPod("b", "")))
	events := []string{<-rec.Events, <-rec.Events}
	if e := events[0]; !strings.Contains(e, "kind=Node") || !strings.Contains(e, "from /etc/manifests/a.yaml refused") {
		t.Errorf("static pod refusal event = %q, want it on the Node, naming the file", e)
	}
	if e := events[1]; strings.Contains(e, "kind=Node") || !strings.Contains(e, "it has no UID") {
		t.Errorf("API pod refusal event = %q, want it on the pod", e)
	}
}
