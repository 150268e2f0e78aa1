package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/component-helpers/node/util/sysctl"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// PodLogDir is where the runtime writes a pod's container logs:
// <logRoot>/<namespace>_<name>_<uid>, as the kubelet lays them out.
func (r *Runtime) PodLogDir(pod *corev1.Pod) string {
	return r.logDir(pod.Namespace, pod.Name, pod.UID)
}

func (r *Runtime) logDir(namespace, name string, uid types.UID) string {
	return filepath.Join(r.opts.LogRoot, namespace+"_"+name+"_"+string(uid))
}

// CgroupParent is the pod's cgroup, the parent of its sandbox's and
// containers': <cgroup root>/kubepods[/<class>]/pod<uid> with cgroupfs.
func (r *Runtime) CgroupParent(pod *corev1.Pod) string {
	return r.opts.Cgroups.PodParent(pod)
}

// sandboxConfig is the CRI description of a pod's sandbox. CreateContainer
// needs it again for every container, so it is derived, never stored. What
// only the sandbox's creation uses and may fail or warn, its resolver
// configuration and FQDN, newSandboxConfig adds.
func (r *Runtime) sandboxConfig(pod *corev1.Pod, attempt uint32) *runtimeapi.PodSandboxConfig {
	c := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt,
		},
		LogDirectory: r.PodLogDir(pod),
		Labels:       sandboxLabels(pod),
		Annotations:  sandboxAnnotations(pod),
		PortMappings: portMappings(pod),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    r.CgroupParent(pod),
			SecurityContext: sandboxSecurityContext(pod, r.opts.SeccompProfileRoot),
			Overhead:        sandboxOverhead(pod),
		},
	}
	// runc cannot set a hostname without a UTS namespace of its own, and a
	// host-network sandbox shares the host's.
	if !pod.Spec.HostNetwork {
		c.Hostname, _ = podHostname(pod, r.opts.ClusterDomain)
	}
	if sc := pod.Spec.SecurityContext; sc != nil && len(sc.Sysctls) > 0 {
		c.Linux.Sysctls = make(map[string]string, len(sc.Sysctls))
		for _, s := range sc.Sysctls {
			c.Linux.Sysctls[sysctl.NormalizeName(s.Name)] = s.Value
		}
	}
	return c
}

// newSandboxConfig is the sandbox's description for its creation: with
// the pod's resolver configuration (which containerd writes to the
// sandbox's resolv.conf) and, with setHostnameAsFQDN, its FQDN as its
// hostname. The warnings say what of the pod's DNS settings the node did
// otherwise than asked.
func (r *Runtime) newSandboxConfig(pod *corev1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, []Warning, error) {
	c := r.sandboxConfig(pod, attempt)
	dns, warnings, err := r.podDNS(pod)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrCreateSandbox, err)
	}
	c.DnsConfig = dns
	if !pod.Spec.HostNetwork {
		if c.Hostname, err = sandboxHostname(pod, r.opts.ClusterDomain); err != nil {
			return nil, warnings, fmt.Errorf("%w: %w", ErrCreateSandbox, err)
		}
	}
	return c, warnings, nil
}

// RuntimeClasses resolves a RuntimeClass name to the runtime handler
// (see internal/runtimeclass); "" names no class and gets "". An error,
// such as a class that does not exist, fails the sandbox's creation.
type RuntimeClasses interface {
	Handler(ctx context.Context, name string) (string, error)
}

// sandboxOverhead tells the runtime of the pod's overhead (spec.overhead,
// from its RuntimeClass), as the kubelet does: cpu as request and limit,
// memory as limit; nil for a pod without one. A runtime that runs pods in
// VMs sizes them by it; runc ignores it.
func sandboxOverhead(pod *corev1.Pod) *runtimeapi.LinuxContainerResources {
	if len(pod.Spec.Overhead) == 0 {
		return nil
	}
	o := corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	if q, ok := pod.Spec.Overhead[corev1.ResourceCPU]; ok {
		o.Resources.Requests[corev1.ResourceCPU], o.Resources.Limits[corev1.ResourceCPU] = q, q
	}
	if q, ok := pod.Spec.Overhead[corev1.ResourceMemory]; ok {
		o.Resources.Limits[corev1.ResourceMemory] = q
	}
	return linuxResources(&o)
}

// runSandbox creates the pod's log directory and runs a new sandbox with
// the handler of the pod's RuntimeClass. A class that cannot be resolved
// creates nothing: the default handler is never taken instead.
func (r *Runtime) runSandbox(ctx context.Context, pod *corev1.Pod, config *runtimeapi.PodSandboxConfig) (string, error) {
	handler, err := r.runtimeHandler(ctx, pod)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrCreateSandbox, err)
	}
	if err := os.MkdirAll(config.LogDirectory, 0o755); err != nil { // #nosec G301 -- log collectors read pod logs, as under the kubelet
		return "", fmt.Errorf("%w: log directory: %w", ErrCreateSandbox, err)
	}
	id, err := r.rt.RunPodSandbox(ctx, config, handler)
	r.metrics.sandboxRun(err)
	if err != nil {
		return "", createError(ErrCreateSandbox, err)
	}
	return id, nil
}

// runtimeHandler is the handler of the pod's RuntimeClass, or
// Options.RuntimeHandler for a pod that names none. Standalone nothing
// resolves a class, and a pod naming one is refused rather than run with
// a handler it did not ask for.
func (r *Runtime) runtimeHandler(ctx context.Context, pod *corev1.Pod) (string, error) {
	name := pod.Spec.RuntimeClassName
	if name == nil || *name == "" {
		return r.opts.RuntimeHandler, nil
	}
	if r.opts.RuntimeClasses == nil {
		return "", fmt.Errorf("runtimeClassName %q: RuntimeClasses are read from the apiserver, and this agent runs without one (standalone): %w", *name, ErrUnsupported)
	}
	handler, err := r.opts.RuntimeClasses.Handler(ctx, *name)
	if err != nil {
		return "", err
	}
	if handler != "" {
		r.log.V(2).Info("Running pod with runtime handler", "pod", pod.Namespace+"/"+pod.Name, "runtimeClass", *name, "runtimeHandler", handler)
	}
	return handler, nil
}

func namespaceOptions(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
		Ipc:     runtimeapi.NamespaceMode_POD,
	}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	return ns
}

func portMappings(pod *corev1.Pod) []*runtimeapi.PortMapping {
	var out []*runtimeapi.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			out = append(out, &runtimeapi.PortMapping{
				Protocol:      protocol(p.Protocol),
				ContainerPort: p.ContainerPort,
				HostPort:      p.HostPort,
				HostIp:        p.HostIP,
			})
		}
	}
	return out
}

func protocol(p corev1.Protocol) runtimeapi.Protocol {
	switch p {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

func anyPrivileged(pod *corev1.Pod) bool {
	for _, c := range podtypes.Containers(&pod.Spec) {
		if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			return true
		}
	}
	return false
}
