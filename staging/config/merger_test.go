package config

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

type step struct {
	op   podtypes.Op
	src  podtypes.Source
	pods []*corev1.Pod
}

func set(src podtypes.Source, pods ...*corev1.Pod) step {
	return step{op: podtypes.SET, src: src, pods: pods}
}

func op(o podtypes.Op, src podtypes.Source, pods ...*corev1.Pod) step {
	return step{op: o, src: src, pods: pods}
}

const (
	file = podtypes.FileSource
	api  = podtypes.APIServerSource
	web  = podtypes.HTTPSource
)

var allModes = []Mode{Incremental, Snapshot, SnapshotAndUpdates}

// TestMergerSetsAndModes drives SET-based changes (what every source
// sends) through every notification mode.
func TestMergerSetsAndModes(t *testing.T) {
	a, b, c := testPod("a", "ua"), testPod("b", "ub"), testPod("c", "uc")
	aNewImage := testPod("a", "ua", withImage("img:2"))
	aLabel := testPod("a", "ua", withLabel("tier", "x"))
	aAnnotation := testPod("a", "ua", withAnnotation("example.com/k", "v"))
	aSeenOnly := testPod("a", "ua", withAnnotation(podtypes.ConfigFirstSeenAnnotationKey, "2030-01-01T00:00:00Z"))
	aRunning := testPod("a", "ua", withPhase(corev1.PodRunning))
	aDeleted := testPod("a", "ua", withDeletion())
	aEdited := testPod("a", "ua2", withImage("img:2")) // a static pod's edit: new UID, same name
	mirrorA := testPod("a", "mirror-ua", asMirror)
	noUID := testPod("nouid", "")

	tests := []modeCase{
		{
			name: "first SET of an empty source says the source is ready",
			then: set(file),
			want: map[Mode][]string{
				Incremental:        {"ADD file []"},
				Snapshot:           {"SET * []"},
				SnapshotAndUpdates: {"SET * []"},
			},
		},
		{
			name:  "first SET of an empty source while another has pods",
			setup: []step{set(file, a)},
			then:  set(api),
			want: map[Mode][]string{
				Incremental:        {"ADD api []"},
				Snapshot:           {"SET * [file:a]"},
				SnapshotAndUpdates: {"SET * [file:a]"},
			},
		},
		{
			name: "first SET with pods",
			then: set(file, a, b),
			want: map[Mode][]string{
				Incremental:        {"ADD file [file:a file:b]"},
				Snapshot:           {"SET * [file:a file:b]"},
				SnapshotAndUpdates: {"SET * [file:a file:b]"},
			},
		},
		{
			name:  "unchanged SET says nothing",
			setup: []step{set(file, a, b)},
			then:  set(file, a, b),
			want:  map[Mode][]string{Incremental: {}, Snapshot: {}, SnapshotAndUpdates: {}},
		},
		{
			name:  "SET adds",
			setup: []step{set(file, a, b)},
			then:  set(file, a, b, c),
			want: map[Mode][]string{
				Incremental:        {"ADD file [file:c]"},
				Snapshot:           {"SET * [file:a file:b file:c]"},
				SnapshotAndUpdates: {"SET * [file:a file:b file:c]"},
			},
		},
		{
			name:  "SET removes what it no longer lists",
			setup: []step{set(file, a, b)},
			then:  set(file, a),
			want: map[Mode][]string{
				Incremental:        {"REMOVE file [file:b]"},
				Snapshot:           {"SET * [file:a]"},
				SnapshotAndUpdates: {"SET * [file:a]"},
			},
		},
		{
			name:  "SET with nothing removes everything",
			setup: []step{set(file, a, b)},
			then:  set(file),
			want: map[Mode][]string{
				Incremental:        {"REMOVE file [file:a file:b]"},
				Snapshot:           {"SET * []"},
				SnapshotAndUpdates: {"SET * []"},
			},
		},
		{
			name:  "spec change is an UPDATE",
			setup: []step{set(file, a, b)},
			then:  set(file, aNewImage, b),
			want: map[Mode][]string{
				Incremental:        {"UPDATE file [file:a]"},
				Snapshot:           {"SET * [file:a file:b]"},
				SnapshotAndUpdates: {"UPDATE file [file:a]"},
			},
		},
		{
			name:  "label change is an UPDATE",
			setup: []step{set(api, a)},
			then:  set(api, aLabel),
			want: map[Mode][]string{
				Incremental:        {"UPDATE api [api:a]"},
				Snapshot:           {"SET * [api:a]"},
				SnapshotAndUpdates: {"UPDATE api [api:a]"},
			},
		},
		{
			name:  "annotation change is an UPDATE",
			setup: []step{set(api, a)},
			then:  set(api, aAnnotation),
			want: map[Mode][]string{
				Incremental:        {"UPDATE api [api:a]"},
				Snapshot:           {"SET * [api:a]"},
				SnapshotAndUpdates: {"UPDATE api [api:a]"},
			},
		},
		{
			name:  "a config-seen change alone is nothing",
			setup: []step{set(api, a)},
			then:  set(api, aSeenOnly),
			want:  map[Mode][]string{Incremental: {}, Snapshot: {}, SnapshotAndUpdates: {}},
		},
		{
			name:  "status-only change is a RECONCILE, in incremental mode only",
			setup: []step{set(api, a)},
			then:  set(api, aRunning),
			want:  map[Mode][]string{Incremental: {"RECONCILE api [api:a]"}, Snapshot: {}, SnapshotAndUpdates: {}},
		},
		{
			name:  "a resourceVersion seen before is that version, unchanged",
			setup: []step{set(api, testPod("a", "ua", withResourceVersion("7")))},
			then:  set(api, testPod("a", "ua", withResourceVersion("7"), withPhase(corev1.PodRunning))),
			want:  map[Mode][]string{Incremental: {}, Snapshot: {}, SnapshotAndUpdates: {}},
		},
		{
			name:  "a new resourceVersion is compared",
			setup: []step{set(api, testPod("a", "ua", withResourceVersion("7")))},
			then:  set(api, testPod("a", "ua", withResourceVersion("8"), withImage("img:2"))),
			want: map[Mode][]string{
				Incremental:        {"UPDATE api [api:a]"},
				Snapshot:           {"SET * [api:a]"},
				SnapshotAndUpdates: {"UPDATE api [api:a]"},
			},
		},
		{
			name:  "deletion requested is a DELETE",
			setup: []step{set(api, a, b)},
			then:  set(api, aDeleted, b),
			want: map[Mode][]string{
				Incremental:        {"DELETE api [api:a]"},
				Snapshot:           {"SET * [api:a api:b]"},
				SnapshotAndUpdates: {"DELETE api [api:a]"},
			},
		},
		{
			name:  "an edited static pod is removed and added",
			setup: []step{set(file, a)},
			then:  set(file, aEdited),
			want: map[Mode][]string{
				Incremental:        {"REMOVE file [file:a]", "ADD file [file:a]"},
				Snapshot:           {"SET * [file:a]"},
				SnapshotAndUpdates: {"SET * [file:a]"},
			},
		},
		{
			name:  "one SET that removes, adds, updates and deletes",
			setup: []step{set(api, a, b, testPod("d", "ud"))},
			then:  set(api, aNewImage, c, testPod("d", "ud", withDeletion())),
			want: map[Mode][]string{
				Incremental:        {"REMOVE api [api:b]", "ADD api [api:c]", "UPDATE api [api:a]", "DELETE api [api:d]"},
				Snapshot:           {"SET * [api:a api:c api:d]"},
				SnapshotAndUpdates: {"SET * [api:a api:c api:d]", "UPDATE api [api:a]", "DELETE api [api:d]"},
			},
		},
		{
			name:  "sources are kept apart: a SET of one leaves the others",
			setup: []step{set(file, a), set(web, b)},
			then:  set(api, c),
			want: map[Mode][]string{
				Incremental:        {"ADD api [api:c]"},
				Snapshot:           {"SET * [file:a http:b api:c]"},
				SnapshotAndUpdates: {"SET * [file:a http:b api:c]"},
			},
		},
		{
			name:  "a full name held by another source is refused",
			setup: []step{set(api, a)},
			then:  set(file, testPod("a", "file-ua"), b),
			want: map[Mode][]string{
				Incremental:        {"ADD file [file:b]"},
				Snapshot:           {"SET * [file:b api:a]"},
				SnapshotAndUpdates: {"SET * [file:b api:a]"},
			},
		},
		{
			name:  "a refused pod is admitted when its name is freed",
			setup: []step{set(api, a), set(file, testPod("a", "file-ua"))},
			then:  set(api),
			want: map[Mode][]string{
				Incremental:        {"REMOVE api [api:a]", "ADD file [file:a]"},
				Snapshot:           {"SET * [file:a]"},
				SnapshotAndUpdates: {"SET * [file:a]"},
			},
		},
		{
			name: "a full name twice in one SET: the first wins",
			then: set(file, a, testPod("a", "other-ua")),
			want: map[Mode][]string{
				Incremental:        {"ADD file [file:a]"},
				Snapshot:           {"SET * [file:a]"},
				SnapshotAndUpdates: {"SET * [file:a]"},
			},
		},
		{
			name: "a UID twice in one SET counts once",
			then: set(file, a, a),
			want: map[Mode][]string{
				Incremental:        {"ADD file [file:a]"},
				Snapshot:           {"SET * [file:a]"},
				SnapshotAndUpdates: {"SET * [file:a]"},
			},
		},
		{
			name:  "a mirror pod shares its static pod's name",
			setup: []step{set(file, a)},
			then:  set(api, mirrorA),
			want: map[Mode][]string{
				Incremental:        {"ADD api [api:a]"},
				Snapshot:           {"SET * [file:a api:a]"},
				SnapshotAndUpdates: {"SET * [file:a api:a]"},
			},
		},
		{
			name: "a pod without a UID is refused",
			then: set(api, noUID, a),
			want: map[Mode][]string{
				Incremental:        {"ADD api [api:a]"},
				Snapshot:           {"SET * [api:a]"},
				SnapshotAndUpdates: {"SET * [api:a]"},
			},
		},
	}
	runModeTable(t, tests)
}

// modeCase is one row of a mode table: setup steps run first (their output
// is dropped), then one step whose notifications must be exactly
// want[mode], in each of the three modes.
type modeCase struct {
	name  string
	setup []step
	then  step
	want  map[Mode][]string
}

func runModeTable(t *testing.T, tests []modeCase) {
	t.Helper()
	for _, tt := range tests {
		for _, mode := range allModes {
			t.Run(tt.name+"/"+mode.String(), func(t *testing.T) {
				m := NewMerger(MergerOptions{Mode: mode, Buffer: 100})
				for _, s := range tt.setup {
					mustMerge(t, m, s)
				}
				drain(m.Updates())
				mustMerge(t, m, tt.then)
				if diff := cmp.Diff(tt.want[mode], drain(m.Updates())); diff != "" {
					t.Errorf("notifications (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// mustMerge merges copies of the step's pods: the merger owns what it gets.
func mustMerge(t *testing.T, m *Merger, s step) {
	t.Helper()
	if err := m.Merge(context.Background(), podtypes.PodUpdate{Op: s.op, Source: s.src, Pods: copyPods(s.pods)}); err != nil {
		t.Fatalf("Merge(%v %s): %v", s.op, s.src, err)
	}
}
