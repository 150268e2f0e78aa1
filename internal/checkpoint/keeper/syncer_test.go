package keeper

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// syncerStub is the inner syncer: SyncPod reports terminal as told, and a
// termination calls during, as if the source changed while it ran.
type syncerStub struct {
	terminal bool
	during   func()
}

func (s *syncerStub) SyncPod(context.Context, podworkers.UpdateType, *corev1.Pod) (bool, error) {
	return s.terminal, nil
}

func (s *syncerStub) SyncTerminatingPod(context.Context, *corev1.Pod, int64, func(*corev1.PodStatus)) error {
	if s.during != nil {
		s.during()
	}
	return nil
}

func (s *syncerStub) SyncTerminatingRuntimePod(context.Context, podworkers.RuntimePod) error {
	return nil
}

func (s *syncerStub) SyncTerminatedPod(context.Context, *corev1.Pod) error { return nil }

// What a termination leaves in the checkpoint: a final status only for a
// pod that completed on its own, never for one killed because its source
// dropped it, even if the source wants it again before the stop ends (a
// manifest removed and put back keeps its UID). The crash loop found the
// second: a kill -9 right after such a stop left the pod never to run again.
func TestSyncerRecordsAFinalStatusOnlyForAPodThatCompleted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool // SyncPod found the pod terminal before the stop
		removed  bool // its source dropped it, then the stop began
		putBack  bool // the source lists it again while it stops
		want     string
	}{
		{"completed while listed", true, false, false, "UID=terminated+final"},
		{"removed", false, true, false, "UID=terminated"},
		{"removed and put back during the stop", false, true, true, "UID=terminated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := checkpoint.NewMem()
			c, _ := newTestKeeper(t, store)
			pod := staticPod("a", "busybox", corev1.RestartPolicyAlways)
			listed := true
			inner := &syncerStub{terminal: tc.terminal}
			if tc.putBack {
				inner.during = func() { listed = true }
			}
			st := &corev1.PodStatus{Phase: corev1.PodSucceeded}
			s := c.Syncer(inner, func(types.UID) *corev1.PodStatus { return st }, func(types.UID) bool { return listed })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			defer func() { cancel(); <-done }()

			c.Accepted(pod)
			if _, err := s.SyncPod(ctx, podworkers.Create, pod); err != nil {
				t.Fatal(err)
			}
			if tc.removed {
				listed = false
			}
			if err := s.SyncTerminatingPod(ctx, pod, 0, func(*corev1.PodStatus) {}); err != nil {
				t.Fatal(err)
			}
			if err := c.write(); err != nil {
				t.Fatal(err)
			}
			if got, want := stored(t, store), string(pod.UID)+tc.want[len("UID"):]; got != want {
				t.Errorf("store = %q, want %q", got, want)
			}
		})
	}
}
