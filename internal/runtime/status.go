package runtime

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// GetPodStatus asks the runtime about every sandbox and container labelled
// with the pod's UID. A pod the runtime does not hold yields a status with
// only ID set.
func (r *Runtime) GetPodStatus(ctx context.Context, uid types.UID) (*PodStatus, error) {
	sandboxes, containers, err := r.listPod(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", uid, err)
	}
	s := &PodStatus{ID: uid}
	ips := map[string][]string{} // by sandbox ID
	for _, sb := range sandboxes {
		s.setIdentity(sb.GetLabels())
		resp, err := r.rt.PodSandboxStatus(ctx, sb.GetId(), false)
		if isNotFound(err) {
			continue // removed since the list
		}
		if err != nil {
			return nil, fmt.Errorf("pod %s: sandbox %s: %w", uid, sb.GetId(), err)
		}
		s.Sandboxes = append(s.Sandboxes, sandboxStatusFrom(resp.GetStatus()))
		ips[sb.GetId()] = sandboxIPs(resp.GetStatus().GetNetwork())
	}
	for _, c := range containers {
		s.setIdentity(c.GetLabels())
		resp, err := r.rt.ContainerStatus(ctx, c.GetId(), false)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pod %s: container %s: %w", uid, c.GetId(), err)
		}
		cs := containerStatusFrom(resp.GetStatus(), c.GetPodSandboxId())
		r.resizedStatus(uid, &cs)
		if cs.State == ContainerStateExited {
			if m := r.terminationMessage(resp.GetStatus()); m != "" {
				if cs.Message != "" {
					cs.Message += ": "
				}
				cs.Message += m
			}
		}
		s.Containers = append(s.Containers, cs)
	}
	slices.SortStableFunc(s.Sandboxes, func(a, b SandboxStatus) int {
		return newestFirst(a.CreatedAt, b.CreatedAt, a.Attempt, b.Attempt)
	})
	slices.SortStableFunc(s.Containers, func(a, b ContainerStatus) int {
		return newestFirst(a.CreatedAt, b.CreatedAt, uint32(a.RestartCount), uint32(b.RestartCount)) // #nosec G115 -- restart counts are never negative
	})
	if len(s.Sandboxes) > 0 && s.Sandboxes[0].State == SandboxReady {
		s.IPs = ips[s.Sandboxes[0].ID]
	}
	return s, nil
}

// listPod lists the pod's sandboxes and containers, both at once: every
// status fetch and every kill starts with these two calls.
func (r *Runtime) listPod(ctx context.Context, uid types.UID) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container, error) {
	selector := map[string]string{LabelPodUID: string(uid)}
	var (
		containers []*runtimeapi.Container
		cErr       error
		done       = make(chan struct{})
	)
	go func() {
		defer close(done)
		containers, cErr = r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: selector})
	}()
	sandboxes, sErr := r.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: selector})
	<-done
	if sErr != nil {
		return nil, nil, fmt.Errorf("listing sandboxes: %w", sErr)
	}
	if cErr != nil {
		return nil, nil, fmt.Errorf("listing containers: %w", cErr)
	}
	return sandboxes, containers, nil
}

func (s *PodStatus) setIdentity(labels map[string]string) {
	if id, ok := identityOf(labels); ok && s.Name == "" {
		s.Name, s.Namespace = id.name, id.namespace
	}
}

// sandboxIPs lists a sandbox's addresses, primary first.
func sandboxIPs(n *runtimeapi.PodSandboxNetworkStatus) []string {
	if n.GetIp() == "" {
		return nil
	}
	ips := []string{n.GetIp()}
	for _, ip := range n.GetAdditionalIps() {
		ips = append(ips, ip.GetIp())
	}
	return ips
}

// GetPods lists every pod the runtime holds sandboxes or containers for,
// grouped by the pod UID label: also pods this process did not create.
// Sandboxes and containers without the label are not the agent's and are
// left out.
func (r *Runtime) GetPods(ctx context.Context) ([]*Pod, error) {
	sandboxes, err := r.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	containers, err := r.rt.ListContainers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	byUID := map[types.UID]*Pod{}
	pod := func(id identity) *Pod {
		p, ok := byUID[id.uid]
		if !ok {
			p = &Pod{ID: id.uid}
			byUID[id.uid] = p
		}
		if p.Name == "" {
			p.Name, p.Namespace = id.name, id.namespace
		}
		return p
	}
	for _, sb := range sandboxes {
		if id, ok := identityOf(sb.GetLabels()); ok {
			p := pod(id)
			p.Sandboxes = append(p.Sandboxes, sandboxFrom(sb))
		}
	}
	for _, c := range containers {
		if id, ok := identityOf(c.GetLabels()); ok {
			p := pod(id)
			p.Containers = append(p.Containers, containerFrom(c))
		}
	}
	pods := make([]*Pod, 0, len(byUID))
	for _, p := range byUID {
		slices.SortStableFunc(p.Sandboxes, func(a, b Sandbox) int { return newestFirst(a.CreatedAt, b.CreatedAt, a.Attempt, b.Attempt) })
		slices.SortStableFunc(p.Containers, func(a, b Container) int { return newestFirst(a.CreatedAt, b.CreatedAt, a.Attempt, b.Attempt) })
		pods = append(pods, p)
	}
	slices.SortFunc(pods, func(a, b *Pod) int { return cmp.Compare(a.ID, b.ID) })
	return pods, nil
}

func newestFirst(ta, tb time.Time, aa, ab uint32) int {
	if c := tb.Compare(ta); c != 0 {
		return c
	}
	return cmp.Compare(ab, aa)
}

func isNotFound(err error) bool {
	return err != nil && grpcstatus.Code(err) == codes.NotFound
}

func unixNano(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func sandboxStateFrom(s runtimeapi.PodSandboxState) SandboxState {
	if s == runtimeapi.PodSandboxState_SANDBOX_READY {
		return SandboxReady
	}
	return SandboxNotReady
}

func containerStateFrom(s runtimeapi.ContainerState) ContainerState {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return ContainerStateCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return ContainerStateRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return ContainerStateExited
	}
	return ContainerStateUnknown
}

func sandboxFrom(sb *runtimeapi.PodSandbox) Sandbox {
	return Sandbox{
		ID:        sb.GetId(),
		State:     sandboxStateFrom(sb.GetState()),
		Attempt:   sb.GetMetadata().GetAttempt(),
		CreatedAt: unixNano(sb.GetCreatedAt()),
	}
}

func sandboxStatusFrom(s *runtimeapi.PodSandboxStatus) SandboxStatus {
	return SandboxStatus{
		ID:          s.GetId(),
		State:       sandboxStateFrom(s.GetState()),
		Attempt:     s.GetMetadata().GetAttempt(),
		IP:          s.GetNetwork().GetIp(),
		HostNetwork: s.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE,
		CreatedAt:   unixNano(s.GetCreatedAt()),
	}
}

func containerFrom(c *runtimeapi.Container) Container {
	return Container{
		ID:        c.GetId(),
		Name:      c.GetMetadata().GetName(),
		SandboxID: c.GetPodSandboxId(),
		State:     containerStateFrom(c.GetState()),
		Attempt:   c.GetMetadata().GetAttempt(),
		Image:     imageName(c.GetImage()),
		Hash:      c.GetAnnotations()[AnnotationContainerHash],
		CreatedAt: unixNano(c.GetCreatedAt()),
	}
}

func containerStatusFrom(s *runtimeapi.ContainerStatus, sandboxID string) ContainerStatus {
	return ContainerStatus{
		ID:           s.GetId(),
		Name:         s.GetMetadata().GetName(),
		SandboxID:    sandboxID,
		State:        containerStateFrom(s.GetState()),
		CreatedAt:    unixNano(s.GetCreatedAt()),
		StartedAt:    unixNano(s.GetStartedAt()),
		FinishedAt:   unixNano(s.GetFinishedAt()),
		ExitCode:     s.GetExitCode(),
		Reason:       s.GetReason(),
		Message:      s.GetMessage(),
		RestartCount: restartCountOf(s.GetAnnotations()),
		Image:        imageName(s.GetImage()),
		ImageRef:     s.GetImageRef(),
		Hash:         s.GetAnnotations()[AnnotationContainerHash],
		Resources:    resourcesFrom(s.GetAnnotations()),
	}
}

// imageName prefers the image as the pod spec named it.
func imageName(spec *runtimeapi.ImageSpec) string {
	if u := spec.GetUserSpecifiedImage(); u != "" {
		return u
	}
	return spec.GetImage()
}
