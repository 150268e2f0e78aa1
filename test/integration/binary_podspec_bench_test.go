package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// BenchmarkBinaryPodSpec measures manifest written -> container "main"
// RUNNING for a plain pod against pods that set every field a static pod
// may (docs/podspec.md), 30 of each, interleaved, each removed before the
// next:
//
//   - plain: one container, nothing else;
//   - every-field: every field that adds no step of its own to the start
//     (volumes of every static kind with subPaths, env with $(VAR) and the
//     downward API, resources, both securityContexts with sysctls, DNS
//     config, host aliases, hostname and subdomain, probes, preStop, ...);
//   - every-field-sequenced: the same and the fields that add steps the
//     runtime takes one after another: an init container that runs to
//     completion, a sidecar with a startup probe, a postStart hook.
//
// and the runtime's floor for the first two: the CRI calls the agent made
// for one pod of each kind, replayed on the runtime alone
// (binary_podspec_floor_test.go), interleaved with the agent's starts.
// agent-added-ms is what the agent adds to the difference beyond the
// runtime's own.
//
// Run it once:
//
//	go test -run '^$' -bench BenchmarkBinaryPodSpec -benchtime=1x -timeout 30m ./...
func BenchmarkBinaryPodSpec(b *testing.B) {
	h := newAgent(b)
	kinds := []struct {
		name string
		pod  func(name string) *corev1.Pod
	}{
		{"plain", func(name string) *corev1.Pod { return testPod(name, shContainer("main", benchForever)) }},
		{"every-field", func(name string) *corev1.Pod { return everyFieldPod(h, name, false) }},
		{"every-field-sequenced", func(name string) *corev1.Pod { return everyFieldPod(h, name, true) }},
	}
	port = 20000
	// The floor: the calls the agent made for one pod of each kind,
	// replayed on the runtime alone. The recorded pods keep running, so
	// that the host paths their mounts name stay.
	floors := map[string]replayedCalls{}
	for _, k := range kinds[:2] {
		name := k.name + "-recorded"
		h.writeManifest(k.pod(name))
		if err := pollContainerRunning(h, h.podName(name), "main", time.Minute); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, h.log(30))
		}
		floors[k.name] = recordedCalls(b, h, name)
	}
	took := map[string][]time.Duration{}
	for i := range 30 {
		for _, k := range kinds {
			name := fmt.Sprintf("%s-%d", k.name, i)
			t0 := time.Now()
			h.writeManifest(k.pod(name))
			if err := pollContainerRunning(h, h.podName(name), "main", time.Minute); err != nil {
				b.Fatalf("%s: %v\n%s", name, err, h.log(30))
			}
			took[k.name] = append(took[k.name], time.Since(t0))
			h.removeManifest(name)
			for len(h.containers(name, false)) > 0 || len(h.sandboxes(name)) > 0 {
				time.Sleep(20 * time.Millisecond)
			}
		}
		for _, k := range kinds[:2] {
			took[k.name+"-floor"] = append(took[k.name+"-floor"], floors[k.name].replay(b, h, fmt.Sprintf("%s-%d", k.name, i)))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, k := range kinds {
		b.ReportMetric(ms(median(took[k.name])), k.name+"-p50-ms")
	}
	agent := median(took["every-field"]) - median(took["plain"])
	floor := median(took["every-field-floor"]) - median(took["plain-floor"])
	b.ReportMetric(ms(median(took["plain-floor"])), "plain-floor-p50-ms")
	b.ReportMetric(ms(median(took["every-field-floor"])), "every-field-floor-p50-ms")
	b.ReportMetric(ms(agent), "every-field-minus-plain-ms")
	b.ReportMetric(ms(floor), "floor-every-field-minus-plain-ms")
	b.ReportMetric(ms(agent-floor), "agent-added-ms")
}

// pollContainerRunning polls the CRI every 10 ms until the pod's
// container of that name runs.
func pollContainerRunning(h *agentHarness, podName, container string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := h.cri.Runtime.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			LabelSelector: map[string]string{"io.kubernetes.pod.name": podName, "io.kubernetes.container.name": container},
			State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		}})
		if err != nil {
			return err
		}
		if len(resp.Containers) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container %s not running within %v", container, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// port is the next container port: a host-network pod's container port
// is a host port too, and one pod's must not wait for the last one's to be
// released.
var port int32

// everyFieldPod sets every field docs/podspec.md lists as honoured for
// static pods, at once; sequenced adds the ones that are steps of their
// own (an init container, a sidecar that must start first, postStart).
func everyFieldPod(h *agentHarness, name string, sequenced bool) *corev1.Pod {
	grace, deadline, uid, gid := int64(5), int64(3600), int64(1000), int64(3000)
	yes, no := true, false
	memory := resource.MustParse("64Mi")
	execProbe := func(period int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: period}
	}
	main := shContainer("main", benchForever)
	main.Args = nil
	main.WorkingDir = "/data"
	main.Env = []corev1.EnvVar{
		envVar("GREETING", "hello"),
		envVar("MESSAGE", "$(GREETING) from $(POD_NAME)"),
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "MEM_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}},
	}
	port++
	main.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: port, Protocol: corev1.ProtocolTCP}}
	main.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: memory},
	}
	main.VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/sub", SubPath: "nested/dir"},
		{Name: "scratch", MountPath: "/scratch"},
		{Name: "info", MountPath: "/etc/podinfo", ReadOnly: true},
		{Name: "projected", MountPath: "/etc/projected", ReadOnly: true},
		{Name: "host", MountPath: "/host", ReadOnly: true},
	}
	main.ReadinessProbe = execProbe(10)
	main.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}},
		InitialDelaySeconds: 3600}
	main.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	main.TerminationMessagePath = "/dev/termination-log"
	main.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	main.SecurityContext = &corev1.SecurityContext{
		RunAsUser: &uid, RunAsGroup: &gid, RunAsNonRoot: &yes, AllowPrivilegeEscalation: &no,
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	pod := testPod(name, main)
	pod.Labels = map[string]string{"app": "every-field"}
	pod.Annotations = map[string]string{"example.com/note": "every field"}
	pod.Spec.TerminationGracePeriodSeconds = &grace
	pod.Spec.ActiveDeadlineSeconds = &deadline
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	pod.Spec.Hostname, pod.Spec.Subdomain = "web", "svc"
	pod.Spec.DNSPolicy = corev1.DNSNone
	pod.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10"}, Searches: []string{"example.local"},
		Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptrTo("2")}}}
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"db.example"}}}
	pod.Spec.ShareProcessNamespace = &yes
	pod.Spec.EnableServiceLinks = &no
	pod.Spec.OS = &corev1.PodOS{Name: corev1.Linux}
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{
		FSGroup: &gid, SupplementalGroups: []int64{4000},
		Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}},
	}
	hostDir := h.dir
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &memory}}},
		{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "mem", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.memory"}},
		}}}},
		{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
			}}},
		}}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}},
	}
	if sequenced {
		always := corev1.ContainerRestartPolicyAlways
		init := shContainer("init", "echo ready > /data/ready")
		init.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		sidecar := shContainer("sidecar", benchForever)
		sidecar.RestartPolicy = &always
		sidecar.StartupProbe = execProbe(1)
		pod.Spec.InitContainers = []corev1.Container{init, sidecar}
		pod.Spec.Containers[0].Lifecycle.PostStart = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}
	}
	return pod
}

func ptrTo[T any](v T) *T { return &v }
