package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/downward"
)

// podEnv is what a container's environment may refer to besides the spec.
type podEnv struct {
	pod *corev1.Pod
	ips []string
	// hostIPs are the node's (Options.HostIPs).
	hostIPs     []string
	sources     EnvSources
	services    ServiceEnv
	allocatable downward.Allocatable
	log         logr.Logger
}

// startContainer makes sure the image is present, creates the container and
// starts it. It returns the container's ID once created, even if the start
// failed, and how the image was had.
//
// targetID, for an ephemeral container that targets another, is that
// container's: the new one joins its process namespace.
func (r *Runtime) startContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, restartCount int,
	sandboxID string, sandbox *runtimeapi.PodSandboxConfig, mounts []Mount, env podEnv, targetID string, pulling func(image string),
) (id string, pulled ImagePull, err error) {
	image, pulled, err := r.ensureImage(ctx, pod, c, sandbox, pulling)
	if err != nil {
		return "", pulled, err
	}
	user := imageUserOf(image)
	if err := imageUserRefusal(pod, c, user); err != nil {
		return "", pulled, err
	}
	tm, err := r.terminationMessageMount(pod, c)
	if err != nil {
		return "", pulled, err
	}
	if tm != nil {
		mounts = append(slices.Clip(mounts), *tm)
	}
	config, err := r.containerConfig(ctx, pod, c, restartCount, image.GetId(), user, mounts, env)
	if err != nil {
		return "", pulled, err
	}
	if ns := config.GetLinux().GetSecurityContext().GetNamespaceOptions(); targetID != "" && ns != nil {
		ns.Pid, ns.TargetId = runtimeapi.NamespaceMode_TARGET, targetID
	}
	if err := os.MkdirAll(filepath.Join(sandbox.LogDirectory, c.Name), 0o755); err != nil { // #nosec G301 -- log collectors read pod logs, as under the kubelet
		return "", pulled, fmt.Errorf("%w: log directory: %w", ErrCreateContainer, err)
	}
	id, err = r.rt.CreateContainer(ctx, sandboxID, config, sandbox)
	if err != nil {
		return "", pulled, createSecurityError(pod, c, createError(ErrCreateContainer, err))
	}
	if err := r.rt.StartContainer(ctx, id); err != nil {
		return id, pulled, fmt.Errorf("%w: %w", ErrStartContainer, err)
	}
	return id, pulled, nil
}

// containerConfig is the CRI description of one container instance.
func (r *Runtime) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, restartCount int, image string, user imageUser, mounts []Mount, env podEnv) (*runtimeapi.ContainerConfig, error) {
	envs, err := containerEnv(ctx, c, env)
	if err != nil {
		return nil, err
	}
	command, args := expandCommand(c, envs)
	config := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(restartCount)}, // #nosec G115 -- a restart count is never negative nor near 2^32
		Image:       &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: c.Image},
		Command:     command,
		Args:        args,
		WorkingDir:  c.WorkingDir,
		Envs:        envs,
		Labels:      containerLabels(pod, c),
		Annotations: containerAnnotations(pod, c, restartCount),
		LogPath:     filepath.Join(c.Name, strconv.Itoa(restartCount)+".log"),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       linuxResources(c),
			SecurityContext: securityContext(pod, c, user, r.opts.SeccompProfileRoot),
		},
	}
	if c.Lifecycle != nil && c.Lifecycle.StopSignal != nil {
		sig, err := r.stopSignal(*c.Lifecycle.StopSignal)
		if err != nil {
			return nil, err
		}
		config.StopSignal = sig
	}
	config.Linux.Resources.OomScoreAdj = oomScoreAdj(pod, c, r.opts.MemoryCapacity)
	for _, m := range mounts {
		p, err := mountPropagation(c, m)
		if err != nil {
			return nil, err
		}
		config.Mounts = append(config.Mounts, &runtimeapi.Mount{
			ContainerPath:  m.ContainerPath,
			HostPath:       m.HostPath,
			Readonly:       m.ReadOnly,
			Propagation:    p,
			SelinuxRelabel: m.SELinuxRelabel && r.opts.SELinuxEnabled,
		})
	}
	return config, nil
}

// mountPropagation is the CRI form of a mount's propagation. Mounts made
// in the container reach the host (Bidirectional) only from a privileged
// container, as under the kubelet.
func mountPropagation(c *corev1.Container, m Mount) (runtimeapi.MountPropagation, error) {
	switch m.Propagation {
	case "", corev1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case corev1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case corev1.MountPropagationBidirectional:
		if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
			return 0, fmt.Errorf("%w: volumeMount %s: mountPropagation Bidirectional is only for privileged containers", ErrContainerConfig, m.ContainerPath)
		}
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, fmt.Errorf("%w: volumeMount %s: mountPropagation %q is none of None, HostToContainer and Bidirectional", ErrContainerConfig, m.ContainerPath, m.Propagation)
}

// CFS period and the share bounds the kernel accepts.
const (
	cpuPeriod = 100000
	minShares = 2
	maxShares = 262144
)

// linuxResources maps requests and limits onto cgroup settings: CPU
// request to shares (the least, 2, without one), CPU limit to a CFS
// quota, memory limit to a limit.
func linuxResources(c *corev1.Container) *runtimeapi.LinuxContainerResources {
	res := &runtimeapi.LinuxContainerResources{}
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		res.CpuShares = min(max(q.MilliValue()*1024/1000, minShares), maxShares)
	} else if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		res.CpuShares = min(max(q.MilliValue()*1024/1000, minShares), maxShares)
	} else {
		// No request is the least weight, as the kubelet gives it, not
		// the runtime's default (1024): a resize that adds a request
		// then raises the container's weight.
		res.CpuShares = minShares
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && !q.IsZero() {
		res.CpuPeriod = cpuPeriod
		res.CpuQuota = max(q.MilliValue()*cpuPeriod/1000, 1000)
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		res.MemoryLimitInBytes = q.Value()
	}
	res.HugepageLimits = hugepageLimits(c)
	return res
}

// hugepageLimits are the container's hugepages-<size> limits, sorted by
// page size, in the CRI's page size notation (2MB, 1GB). Only those the
// container sets: a node whose kernel has no hugetlb cgroup controller
// could not enforce a zero for the others.
func hugepageLimits(c *corev1.Container) []*runtimeapi.HugepageLimit {
	var out []*runtimeapi.HugepageLimit
	for name, q := range c.Resources.Limits {
		size, ok := strings.CutPrefix(string(name), corev1.ResourceHugePagesPrefix)
		if !ok {
			continue
		}
		bytes, err := resource.ParseQuantity(size)
		if err != nil || bytes.Value() <= 0 {
			continue // the apiserver and the manifest validation refuse these
		}
		out = append(out, &runtimeapi.HugepageLimit{PageSize: pageSize(bytes.Value()), Limit: uint64(q.Value())}) // #nosec G115 -- a limit is never negative
	}
	slices.SortFunc(out, func(a, b *runtimeapi.HugepageLimit) int { return strings.Compare(a.PageSize, b.PageSize) })
	return out
}

// pageSize spells a page size as the hugetlb cgroup names its files:
// 64KB, 2MB, 1GB.
func pageSize(bytes int64) string {
	for _, u := range []struct {
		unit int64
		name string
	}{{1 << 30, "GB"}, {1 << 20, "MB"}, {1 << 10, "KB"}} {
		if bytes%u.unit == 0 {
			return strconv.FormatInt(bytes/u.unit, 10) + u.name
		}
	}
	return strconv.FormatInt(bytes, 10) + "B"
}
