package config

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// TestMergerOperationsAndModes drives the explicit operations (ADD,
// UPDATE, DELETE, REMOVE, RECONCILE as inputs) through every mode.
func TestMergerOperationsAndModes(t *testing.T) {
	a, b := testPod("a", "ua"), testPod("b", "ub")
	aNewImage := testPod("a", "ua", withImage("img:2"))
	aRunning := testPod("a", "ua", withPhase(corev1.PodRunning))
	aDeleted := testPod("a", "ua", withDeletion())

	runModeTable(t, []modeCase{
		{
			name:  "ADD of a new pod",
			setup: []step{set(api, a)},
			then:  op(podtypes.ADD, api, b),
			want: map[Mode][]string{
				Incremental:        {"ADD api [api:b]"},
				Snapshot:           {"SET * [api:a api:b]"},
				SnapshotAndUpdates: {"SET * [api:a api:b]"},
			},
		},
		{
			name: "ADD before any SET does not make the source ready",
			then: op(podtypes.ADD, api, a),
			want: map[Mode][]string{
				Incremental:        {"ADD api [api:a]"},
				Snapshot:           {"SET * [api:a]"},
				SnapshotAndUpdates: {"SET * [api:a]"},
			},
		},
		{
			name:  "UPDATE of a changed pod",
			setup: []step{set(api, a, b)},
			then:  op(podtypes.UPDATE, api, aNewImage),
			want: map[Mode][]string{
				Incremental:        {"UPDATE api [api:a]"},
				Snapshot:           {"SET * [api:a api:b]"},
				SnapshotAndUpdates: {"UPDATE api [api:a]"},
			},
		},
		{
			name:  "UPDATE of an unchanged pod is nothing",
			setup: []step{set(api, a)},
			then:  op(podtypes.UPDATE, api, a),
			want:  map[Mode][]string{Incremental: {}, Snapshot: {}, SnapshotAndUpdates: {}},
		},
		{
			name:  "UPDATE of an unknown pod adds it",
			setup: []step{set(api, a)},
			then:  op(podtypes.UPDATE, api, b),
			want: map[Mode][]string{
				Incremental:        {"ADD api [api:b]"},
				Snapshot:           {"SET * [api:a api:b]"},
				SnapshotAndUpdates: {"SET * [api:a api:b]"},
			},
		},
		{
			name:  "DELETE marks graceful deletion",
			setup: []step{set(api, a)},
			then:  op(podtypes.DELETE, api, aDeleted),
			want: map[Mode][]string{
				Incremental:        {"DELETE api [api:a]"},
				Snapshot:           {"SET * [api:a]"},
				SnapshotAndUpdates: {"DELETE api [api:a]"},
			},
		},
		{
			name:  "REMOVE forgets a pod",
			setup: []step{set(api, a, b)},
			then:  op(podtypes.REMOVE, api, a),
			want: map[Mode][]string{
				Incremental:        {"REMOVE api [api:a]"},
				Snapshot:           {"SET * [api:b]"},
				SnapshotAndUpdates: {"SET * [api:b]"},
			},
		},
		{
			name:  "REMOVE of an unknown pod is nothing",
			setup: []step{set(api, a)},
			then:  op(podtypes.REMOVE, api, b),
			want:  map[Mode][]string{Incremental: {}, Snapshot: {}, SnapshotAndUpdates: {}},
		},
		{
			name:  "RECONCILE of a status change",
			setup: []step{set(api, a)},
			then:  op(podtypes.RECONCILE, api, aRunning),
			want:  map[Mode][]string{Incremental: {"RECONCILE api [api:a]"}, Snapshot: {}, SnapshotAndUpdates: {}},
		},
	})
}
