package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

// Every CRI call is counted and timed under the kubelet's operation_type;
// a failed one is counted as an error too; a method the table does not
// know passes through uncounted.
func TestRuntimeOperationMetrics(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	failed := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		return errors.New("no")
	}
	ctx := context.Background()
	for _, call := range []struct {
		method  string
		invoker grpc.UnaryInvoker
	}{
		{"/runtime.v1.RuntimeService/ListPodSandbox", ok},
		{"/runtime.v1.RuntimeService/ListPodSandbox", ok},
		{"/runtime.v1.RuntimeService/UpdateContainerResources", failed},
		{"/runtime.v1.ImageService/PullImage", failed},
		{"/runtime.v1.ImageService/PullImage", ok},
		{"/runtime.v1.RuntimeService/NotACRIMethod", ok},
	} {
		_ = m.intercept(ctx, call.method, nil, nil, nil, call.invoker)
	}
	for name, want := range map[string]map[string]float64{
		"kubelet_runtime_operations_total":        {"list_podsandbox": 2, "update_container": 1, "pull_image": 2},
		"kubelet_runtime_operations_errors_total": {"update_container": 1, "pull_image": 1},
	} {
		got, err := testutil.GetCounterValuesFromGatherer(reg, name, nil, "operation_type")
		if err != nil {
			t.Fatal(err)
		}
		for op, n := range want {
			if got[op] != n {
				t.Errorf("%s{operation_type=%q} = %v, want %v", name, op, got[op], n)
			}
		}
		for op := range got {
			if _, expected := want[op]; !expected && got[op] != 0 {
				t.Errorf("%s{operation_type=%q} = %v, want none", name, op, got[op])
			}
		}
	}
	h, err := testutil.GetHistogramVecFromGatherer(reg, "kubelet_runtime_operations_duration_seconds", map[string]string{"operation_type": "pull_image"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.GetAggregatedSampleCount(); got != 2 {
		t.Errorf("pull_image durations observed: %d, want 2", got)
	}
}

// A sandbox run counts a started pod (and an error if it failed); every
// container the sync sets out to start counts under its type.
func TestStartedPodsAndContainersMetrics(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	w := newWorld(t)
	var err error
	if w.rt.metrics, err = newMetrics(reg); err != nil {
		t.Fatal(err)
	}
	pod := newPod(withInit("i0"))
	w.mustSync(pod)
	w.exit(w.containerID("u1", "i0"), 0, time.Second)
	w.mustSync(pod)

	pods, err := testutil.GetCounterMetricValue(w.rt.metrics.startedPods)
	if err != nil {
		t.Fatal(err)
	}
	if pods != 1 {
		t.Errorf("kubelet_started_pods_total = %v, want 1", pods)
	}
	got, err := testutil.GetCounterValuesFromGatherer(reg, "kubelet_started_containers_total", nil, "container_type")
	if err != nil {
		t.Fatal(err)
	}
	if got["init_container"] != 1 || got["container"] != 1 || got["ephemeral_container"] != 0 {
		t.Errorf("kubelet_started_containers_total = %v, want one init_container and one container", got)
	}

	w.cri.InjectError("RunPodSandbox", errors.New("no network"))
	if _, err := w.sync(newPod(func(p *corev1.Pod) { p.UID, p.Name = "u2", "other" }), nil); err == nil {
		t.Fatal("the sandbox's failure was not reported")
	}
	errs, _ := testutil.GetCounterMetricValue(w.rt.metrics.startedPodErrors)
	if pods, _ := testutil.GetCounterMetricValue(w.rt.metrics.startedPods); pods != 2 || errs != 1 {
		t.Errorf("started pods %v, errors %v; want 2 and 1", pods, errs)
	}
}

// BenchmarkIntercept is the metrics' cost of one CRI call.
func BenchmarkIntercept(b *testing.B) {
	m, err := newMetrics(metrics.NewKubeRegistry())
	if err != nil {
		b.Fatal(err)
	}
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.intercept(ctx, "/runtime.v1.RuntimeService/ContainerStatus", nil, nil, nil, ok)
	}
}
