package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nodeagent/nodeagent/internal/allocation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// An API pod's resize changes the cpu and memory requests and limits of
// its running containers. A container runs with what it was created with
// (AnnotationContainerResources) until a resize updates it in place;
// ResizeRecords remember what such an update gave it, since a container's
// annotations cannot change. Any difference between the spec (the
// resources the node allocated: the caller's business) and what runs is
// then closed by SyncPod: in place through UpdateContainerResources, or by
// a restart of that container alone when the resizePolicy of a changed
// resource says RestartContainer.

// ResizeRecords remember the resources an in-place resize gave a running
// container, by the container's name and ID, across restarts of the
// agent.
type ResizeRecords interface {
	Resized(pod types.UID, name, containerID string) (corev1.ResourceRequirements, bool)
	SetResized(pod types.UID, name, containerID string, r corev1.ResourceRequirements) error
}

// ActionResizeContainer is an in-place resize of a running container.
const ActionResizeContainer ActionKind = "ResizeContainer"

// ErrResize marks a failed in-place resize; the status reports it as the
// PodResizeInProgress condition's Error.
var ErrResize = errors.New("resizing in place failed")

// resizeStep updates a running container's resources in place.
type resizeStep struct {
	ID, Name string
	Index    int
}

// resourcesFrom reads AnnotationContainerResources; nil when the container
// was made without it (by an agent before in-place resize).
func resourcesFrom(annotations map[string]string) *corev1.ResourceRequirements {
	raw, ok := annotations[AnnotationContainerResources]
	if !ok || len(raw) > 4096 {
		return nil
	}
	var r corev1.ResourceRequirements
	if json.Unmarshal([]byte(raw), &r) != nil {
		return nil
	}
	r = allocation.CPUMemory(r)
	return &r
}

// changedResources lists which of cpu and memory differ, in requests or
// limits, between what runs and the spec.
func changedResources(running, spec corev1.ResourceRequirements) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range allocation.Resources {
		if !sameQuantity(running.Requests, spec.Requests, name) || !sameQuantity(running.Limits, spec.Limits, name) {
			out = append(out, name)
		}
	}
	return out
}

func sameQuantity(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	qa, oka := a[name]
	qb, okb := b[name]
	return oka == okb && qa.Cmp(qb) == 0
}

// NeedsResize reports whether the container runs, with other cpu or
// memory than spec asks (and known: see Resources).
func (c *ContainerStatus) NeedsResize(spec *corev1.Container) bool {
	return c.State == ContainerStateRunning && c.Resources != nil && len(changedResources(*c.Resources, spec.Resources)) > 0
}

// restartsToResize reports whether a change of these resources needs the
// container restarted: its resizePolicy says so for one of them.
func restartsToResize(c *corev1.Container, changed []corev1.ResourceName) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy == corev1.RestartContainer && slices.Contains(changed, p.ResourceName) {
			return true
		}
	}
	return false
}

// planResize decides what a running container st, kept by the plan, needs
// to run with its spec's resources: nothing, an update in place, or a
// restart. It reports whether the container is replaced.
func (p *plan) planResize(c *corev1.Container, i int, st *ContainerStatus) bool {
	if st.Resources == nil {
		return false // made before resizes were tracked: what it runs with is unknown
	}
	changed := changedResources(*st.Resources, c.Resources)
	switch {
	case len(changed) == 0:
		return false
	case restartsToResize(c, changed):
		p.Kill = append(p.Kill, killStep{ID: st.ID, Name: c.Name, Reason: "resize needs a restart", PreStop: true})
		p.Start = append(p.Start, startStep{Index: i, Name: c.Name, Reason: "resize needs a restart", Previous: st})
		return true
	}
	p.Resize = append(p.Resize, resizeStep{ID: st.ID, Name: c.Name, Index: i})
	return false
}

// resizeContainers updates the containers of steps to their spec's
// resources, within the pod's cgroup, whose limits grow before and
// shrink after them (a child's CFS quota may not exceed its parent's), and
// remembers what each was given.
func (r *Runtime) resizeContainers(ctx context.Context, pod *corev1.Pod, status *PodStatus, steps []resizeStep) []Action {
	// The pod as it runs: its resized containers with what they run with.
	running := pod.DeepCopy()
	for _, s := range steps {
		if st := status.LatestContainer(s.Name); st != nil && st.Resources != nil {
			running.Spec.Containers[s.Index].Resources = *st.Resources
		}
	}
	// Shrinking containers first: the memory they give back is what the
	// growing ones may take within the pod's limit.
	ordered := slices.Clone(steps)
	slices.SortStableFunc(ordered, func(a, b resizeStep) int {
		return cmpGrowth(running.Spec.Containers[a.Index].Resources, pod.Spec.Containers[a.Index].Resources) -
			cmpGrowth(running.Spec.Containers[b.Index].Resources, pod.Spec.Containers[b.Index].Resources)
	})
	actions := make([]Action, 0, len(ordered))
	update := func() error {
		var errs []error
		for _, s := range ordered {
			c := &pod.Spec.Containers[s.Index]
			err := r.rt.UpdateContainerResources(ctx, s.ID, &runtimeapi.ContainerResources{Linux: linuxResources(c)})
			if err == nil && r.opts.Resized != nil {
				err = r.opts.Resized.SetResized(pod.UID, c.Name, s.ID, allocation.CPUMemory(c.Resources))
			}
			if err != nil {
				err = fmt.Errorf("container %q: %w: %w", c.Name, ErrResize, err)
				errs = append(errs, err)
			}
			actions = append(actions, Action{Kind: ActionResizeContainer, Container: c.Name, ID: s.ID, Reason: "resources changed", Err: err})
		}
		return errors.Join(errs...)
	}
	if err := r.opts.Cgroups.ResizePod(running, pod, update); err != nil && !errors.Is(err, ErrResize) {
		// The pod's cgroup (the containers' errors are theirs, above).
		actions = append(actions, Action{Kind: ActionResizeContainer, Reason: "pod cgroup", Err: fmt.Errorf("%w: pod cgroup: %w", ErrResize, err)})
	}
	return actions
}

// cmpGrowth is -1 when the memory limit shrinks, 1 when it grows.
func cmpGrowth(from, to corev1.ResourceRequirements) int {
	a, aok := from.Limits[corev1.ResourceMemory]
	b, bok := to.Limits[corev1.ResourceMemory]
	if !aok || !bok {
		return 0
	}
	return b.Cmp(a)
}

// resizedStatus gives c the resources a resize gave it, if any.
func (r *Runtime) resizedStatus(uid types.UID, c *ContainerStatus) {
	if r.opts.Resized == nil || c.Resources == nil {
		return
	}
	if got, ok := r.opts.Resized.Resized(uid, c.Name, c.ID); ok {
		got = allocation.CPUMemory(got)
		c.Resources = &got
	}
}
