package agent

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// A SyncPod that acted stores the status it fetched afterwards in the
// PLEG's cache too, stamped before the fetch: the relist that sees the
// same need not fetch it again, and the pod's next sync waits for nothing.
func TestSyncPodStoresItsFreshStatusInTheCache(t *testing.T) {
	root := t.TempDir()
	vols, err := volumes.New(volumes.Options{RootDir: root})
	if err != nil {
		t.Fatal(err)
	}
	rt := newFakeRuntime(root)
	cache := pleg.NewCache()
	cache.UpdateTime(time.Now()) // a relist has happened: a new pod waits for nothing
	clk := testingclock.NewFakeClock(time.Now())
	s := &syncer{
		rt: rt, vols: vols, cache: cache, statuses: status.NewStore(nil), timeline: timeline.New(0),
		desired: func(types.UID) bool { return true }, clock: clk,
		log: testr.New(t), pods: map[types.UID]*podRecord{},
	}
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)

	if _, err := s.SyncPod(context.Background(), podworkers.Create, pod, nil); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	cached, err := cache.Get(pod.UID)
	if err != nil || !running(cached) {
		t.Fatalf("cached status after SyncPod: %+v, %v; want its container running", cached, err)
	}
	// Stamped when it was fetched, which is when the sync ended: the next
	// sync takes it without waiting for a relist.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	clk.Step(time.Millisecond)
	if got, err := cache.GetNewerThan(ctx, pod.UID, clk.Now().Add(-2*time.Millisecond)); err != nil || got != cached {
		t.Errorf("GetNewerThan: %+v, %v; want the stored status", got, err)
	}
}

func running(s *runtime.PodStatus) bool {
	for _, c := range s.Containers {
		if c.State == runtime.ContainerStateRunning {
			return true
		}
	}
	return false
}
