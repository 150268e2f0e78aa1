package runtime

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"k8s.io/component-base/metrics"
)

// criOperations are the kubelet's operation_type for each unary CRI call,
// keyed by gRPC method; the kubelet names them after its own wrapper's
// methods, which is why a few are not the CRI names in snake case.
var criOperations = map[string]string{
	"Version": "version", "Status": "status", "RuntimeConfig": "runtime_config", "UpdateRuntimeConfig": "update_runtime_config",
	"RunPodSandbox": "run_podsandbox", "StopPodSandbox": "stop_podsandbox", "RemovePodSandbox": "remove_podsandbox",
	"PodSandboxStatus": "podsandbox_status", "ListPodSandbox": "list_podsandbox", "UpdatePodSandboxResources": "update_podsandbox_resources",
	"CreateContainer": "create_container", "StartContainer": "start_container", "StopContainer": "stop_container",
	"RemoveContainer": "remove_container", "ListContainers": "list_containers", "ContainerStatus": "container_status",
	"UpdateContainerResources": "update_container", "ReopenContainerLog": "reopen_container_log",
	"ExecSync": "exec_sync", "Exec": "exec", "Attach": "attach", "PortForward": "port_forward",
	"ContainerStats": "container_stats", "ListContainerStats": "list_container_stats",
	"PodSandboxStats": "podsandbox_stats", "ListPodSandboxStats": "list_podsandbox_stats",
	"CheckpointContainer": "checkpoint_container", "ListMetricDescriptors": "list_metric_descriptors", "ListPodSandboxMetrics": "list_podsandbox_metrics",
	"ListImages": "list_images", "ImageStatus": "image_status", "PullImage": "pull_image", "RemoveImage": "remove_image", "ImageFsInfo": "image_fs_info",
}

// The values of kubelet_started_containers_total's container_type label.
const (
	containerTypeRegular = iota
	containerTypeInit
	containerTypeEphemeral
)

var containerTypes = [...]string{"container", "init_container", "ephemeral_container"}

// runtimeMetrics are the kubelet's runtime metrics, under its names: one
// count, error count and duration per CRI call, and the sandboxes and
// containers started. Every child is looked up once, when registered: a
// call costs a map lookup by its method name and three updates, no
// allocation.
type runtimeMetrics struct {
	operations, errors *metrics.CounterVec
	duration           *metrics.HistogramVec
	startedPods        *metrics.Counter
	startedPodErrors   *metrics.Counter
	startedContainers  *metrics.CounterVec
	// byMethod: by full gRPC method name, /runtime.v1.RuntimeService/X.
	byMethod      map[string]operationSeries
	byContainerTy [len(containerTypes)]metrics.CounterMetric
}

type operationSeries struct {
	total, errors metrics.CounterMetric
	duration      metrics.ObserverMetric
}

func newMetrics(reg metrics.KubeRegistry) (*runtimeMetrics, error) {
	m := &runtimeMetrics{
		operations: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "runtime_operations_total",
			Help:           "CRI calls made to the container runtime, by operation.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"operation_type"}),
		errors: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "runtime_operations_errors_total",
			Help:           "CRI calls to the container runtime that returned an error, by operation.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"operation_type"}),
		duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem: "kubelet", Name: "runtime_operations_duration_seconds",
			Help:           "Duration of CRI calls to the container runtime, by operation, in seconds.",
			Buckets:        metrics.ExponentialBuckets(.005, 2.5, 14),
			StabilityLevel: metrics.ALPHA,
		}, []string{"operation_type"}),
		startedPods: metrics.NewCounter(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "started_pods_total",
			Help:           "Pod sandboxes the agent asked the runtime to run.",
			StabilityLevel: metrics.ALPHA,
		}),
		startedPodErrors: metrics.NewCounter(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "started_pods_errors_total",
			Help:           "Pod sandboxes the runtime failed to run.",
			StabilityLevel: metrics.ALPHA,
		}),
		startedContainers: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "started_containers_total",
			Help:           "Containers the agent set out to start (pull, create and start), by type (container, init_container, ephemeral_container).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"container_type"}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.operations, m.errors, m.duration, m.startedPods, m.startedPodErrors, m.startedContainers} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	// After registering: before, component-base hands out inert children.
	m.byMethod = make(map[string]operationSeries, len(criOperations))
	for method, op := range criOperations {
		s := operationSeries{total: m.operations.WithLabelValues(op), errors: m.errors.WithLabelValues(op), duration: m.duration.WithLabelValues(op)}
		m.byMethod["/runtime.v1.RuntimeService/"+method] = s
		m.byMethod["/runtime.v1.ImageService/"+method] = s
	}
	for i, ty := range containerTypes {
		m.byContainerTy[i] = m.startedContainers.WithLabelValues(ty)
	}
	return m, nil
}

// intercept is a gRPC unary interceptor that counts and times every CRI
// call, as the kubelet's instrumented runtime service does.
func (m *runtimeMetrics) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	s, known := m.byMethod[method]
	if !known {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	s.total.Inc()
	s.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		s.errors.Inc()
	}
	return err
}

// sandboxRun counts a sandbox the agent asked for, and whether it failed.
func (m *runtimeMetrics) sandboxRun(err error) {
	m.startedPods.Inc()
	if err != nil {
		m.startedPodErrors.Inc()
	}
}

// containerStarting counts a container the agent sets out to start.
func (m *runtimeMetrics) containerStarting(s startStep) {
	switch {
	case s.Init:
		m.byContainerTy[containerTypeInit].Inc()
	case s.Ephemeral:
		m.byContainerTy[containerTypeEphemeral].Inc()
	default:
		m.byContainerTy[containerTypeRegular].Inc()
	}
}
