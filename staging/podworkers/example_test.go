package podworkers_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// printSyncer stands in for the agent: it prints each call and signals
// the first SyncPod and the final cleanup.
type printSyncer struct {
	synced, cleaned chan struct{}
}

func (s printSyncer) SyncPod(_ context.Context, t podworkers.UpdateType, pod *corev1.Pod) (bool, error) {
	fmt.Println("SyncPod", t, pod.Name)
	close(s.synced)
	return false, nil
}

func (printSyncer) SyncTerminatingPod(_ context.Context, pod *corev1.Pod, grace int64, statusFn func(*corev1.PodStatus)) error {
	var st corev1.PodStatus
	statusFn(&st)
	fmt.Println("SyncTerminatingPod", pod.Name, "grace", grace, "reason", st.Reason)
	return nil
}

func (printSyncer) SyncTerminatingRuntimePod(context.Context, podworkers.RuntimePod) error {
	return nil
}

func (s printSyncer) SyncTerminatedPod(_ context.Context, pod *corev1.Pod) error {
	fmt.Println("SyncTerminatedPod", pod.Name)
	close(s.cleaned)
	return nil
}

func Example() {
	syncer := printSyncer{synced: make(chan struct{}), cleaned: make(chan struct{})}
	workers, err := podworkers.New(podworkers.Options{Syncer: syncer})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = workers.Run(ctx)
	}()

	grace := int64(30)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "uid-1", Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: &grace},
	}
	_ = workers.UpdatePod(podworkers.UpdatePodOptions{Type: podworkers.Create, Pod: pod})
	<-syncer.synced

	// Evict it with a shorter grace period and wait until it has stopped.
	stoppedPod := make(chan struct{})
	short := int64(5)
	_ = workers.UpdatePod(podworkers.UpdatePodOptions{Type: podworkers.Kill, Pod: pod, Kill: &podworkers.KillPodOptions{
		GracePeriodOverride: &short,
		Evict:               true,
		StatusFunc:          func(st *corev1.PodStatus) { st.Reason = "Evicted" },
		Completed:           stoppedPod,
	}})
	<-stoppedPod
	<-syncer.cleaned
	fmt.Println("could run:", workers.CouldHaveRunningContainers(pod.UID))

	// Housekeeping, which the agent runs periodically: the pod is no longer
	// wanted, so once its cleanup has returned its worker is forgotten.
	for len(workers.SyncKnownPods(nil)) > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("remove content:", workers.ShouldPodContentBeRemoved(pod.UID))

	cancel()
	<-stopped
	// Output:
	// SyncPod create web
	// SyncTerminatingPod web grace 5 reason Evicted
	// SyncTerminatedPod web
	// could run: false
	// remove content: true
}
