package app

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The objects get prints with -o json, yaml, name, jsonpath and
// custom-columns: v1 Pods, several in a v1 List, as kubectl get prints
// them, so that the same templates and scripts work on both.

// podObjects returns the pods of a listing as v1 objects: one Pod when
// single is set and there is exactly one, else a v1 List. They are
// unstructured, as kubectl's: its printers print them the same way
// (fields in name order), and -o name takes a list only so.
func (c *cli) podObjects(pods []localapi.Pod, single bool) (runtime.Object, error) {
	specs := map[string]map[types.UID]corev1.PodSpec{} // by origin, by UID
	items := make([]unstructured.Unstructured, len(pods))
	for i, p := range pods {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.v1Pod(p, specs))
		if err != nil {
			return nil, err
		}
		items[i] = unstructured.Unstructured{Object: u}
	}
	if single && len(items) == 1 {
		return &items[0], nil
	}
	return &unstructured.UnstructuredList{
		Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}},
		Items:  items,
	}, nil
}

// v1Pod is a pod of the local API as a v1 Pod. The local API does not
// serve the spec: it comes from the pod's manifest when the file still
// holds this version of the pod (same UID); else the spec names the
// containers and images the status reports.
func (c *cli) v1Pod(p localapi.Pod, specs map[string]map[types.UID]corev1.PodSpec) *corev1.Pod {
	out := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: types.UID(p.UID),
			Annotations: map[string]string{},
		},
	}
	if p.ConfigHash != "" {
		out.Annotations[podtypes.ConfigHashAnnotationKey] = p.ConfigHash
	}
	if p.Source != "" {
		out.Annotations[podtypes.ConfigSourceAnnotationKey] = p.Source
	}
	if p.Origin != "" {
		out.Annotations[podtypes.ConfigOriginAnnotationKey] = p.Origin
	}
	spec, ok := c.specOf(p, specs)
	if !ok {
		for _, ct := range p.InitContainers {
			spec.InitContainers = append(spec.InitContainers, corev1.Container{Name: ct.Name, Image: ct.Image})
		}
		for _, ct := range p.Containers {
			spec.Containers = append(spec.Containers, corev1.Container{Name: ct.Name, Image: ct.Image})
		}
	}
	out.Spec = spec
	out.Status = corev1.PodStatus{
		Phase: corev1.PodPhase(p.Phase), Reason: p.Reason, Message: p.Message,
		PodIP: p.PodIP, StartTime: metaTime(p.StartTime),
		InitContainerStatuses: v1Statuses(p.InitContainers),
		ContainerStatuses:     v1Statuses(p.Containers),
	}
	if p.PodIP != "" {
		out.Status.PodIPs = []corev1.PodIP{{IP: p.PodIP}}
	}
	for _, cond := range p.Conditions {
		out.Status.Conditions = append(out.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodConditionType(cond.Type), Status: corev1.ConditionStatus(cond.Status),
			Reason: cond.Reason, Message: cond.Message, LastTransitionTime: derefTime(cond.LastTransitionTime),
		})
	}
	return out
}

// specOf finds the pod's spec in its manifest file, read once per file.
func (c *cli) specOf(p localapi.Pod, specs map[string]map[types.UID]corev1.PodSpec) (corev1.PodSpec, bool) {
	if p.Source != "file" || p.Origin == "" {
		return corev1.PodSpec{}, false
	}
	byUID, read := specs[p.Origin]
	if !read {
		byUID = map[types.UID]corev1.PodSpec{}
		if pods, err := manifest.ReadManifestFile(p.Origin, parseOptions(c.settings.NodeName, p.Origin)); err == nil {
			for _, mp := range pods {
				byUID[mp.UID] = mp.Spec
			}
		}
		specs[p.Origin] = byUID
	}
	spec, ok := byUID[types.UID(p.UID)]
	return spec, ok
}

func v1Statuses(cs []localapi.Container) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, ct := range cs {
		s := corev1.ContainerStatus{Name: ct.Name, Image: ct.Image, ContainerID: ct.ContainerID, Ready: ct.Ready, RestartCount: ct.RestartCount}
		switch ct.State {
		case localapi.StateRunning:
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: derefTime(ct.StartedAt)}
			started := true
			s.Started = &started
		case localapi.StateTerminated:
			t := &corev1.ContainerStateTerminated{Reason: ct.Reason, Message: ct.Message, StartedAt: derefTime(ct.StartedAt), ContainerID: ct.ContainerID}
			if ct.ExitCode != nil {
				t.ExitCode = *ct.ExitCode
			}
			s.State.Terminated = t
		case localapi.StateWaiting:
			s.State.Waiting = &corev1.ContainerStateWaiting{Reason: ct.Reason, Message: ct.Message}
		}
		if lt := ct.LastTermination; lt != nil {
			s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: lt.ExitCode, Reason: lt.Reason, Message: lt.Message, FinishedAt: derefTime(lt.FinishedAt),
			}
		}
		out = append(out, s)
	}
	return out
}

func metaTime(t *time.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	mt := metav1.NewTime(*t)
	return &mt
}

func derefTime(t *time.Time) metav1.Time {
	if t == nil {
		return metav1.Time{}
	}
	return metav1.NewTime(*t)
}
