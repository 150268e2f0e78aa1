package runtime

import (
	"encoding/json"
	"strconv"

	"github.com/nodeagent/nodeagent/internal/allocation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The label and annotation keys the kubelet puts on sandboxes and
// containers. Using the same keys lets crictl users recognise pods, and lets
// the agent adopt what runs after a restart: the labels carry the pod's
// identity, the annotations what the agent needs to manage a container it
// has no spec for.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"

	AnnotationContainerHash            = "io.kubernetes.container.hash"
	AnnotationRestartCount             = "io.kubernetes.container.restartCount"
	AnnotationTerminationGracePeriod   = "io.kubernetes.pod.terminationGracePeriod"
	AnnotationTerminationMessagePath   = "io.kubernetes.container.terminationMessagePath"
	AnnotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
	AnnotationContainerPorts           = "io.kubernetes.container.ports"
	// AnnotationContainerResources holds the cpu and memory requests and
	// limits the container was created with (JSON): what it runs with
	// until an in-place resize changes them (see resize.go).
	AnnotationContainerResources = "io.nodeagent.container.resources"
)

// sandboxLabels are the pod's own labels plus its identity, which wins over
// a pod label of the same key.
func sandboxLabels(pod *corev1.Pod) map[string]string {
	labels := make(map[string]string, len(pod.Labels)+3)
	for k, v := range pod.Labels {
		labels[k] = v
	}
	labels[LabelPodName] = pod.Name
	labels[LabelPodNamespace] = pod.Namespace
	labels[LabelPodUID] = string(pod.UID)
	return labels
}

func sandboxAnnotations(pod *corev1.Pod) map[string]string {
	annotations := make(map[string]string, len(pod.Annotations))
	for k, v := range pod.Annotations {
		annotations[k] = v
	}
	return annotations
}

// containerLabels carry only identity: labels are for selecting, and
// containers are selected by pod and name.
func containerLabels(pod *corev1.Pod, c *corev1.Container) map[string]string {
	return map[string]string{
		LabelPodName:       pod.Name,
		LabelPodNamespace:  pod.Namespace,
		LabelPodUID:        string(pod.UID),
		LabelContainerName: c.Name,
	}
}

func containerAnnotations(pod *corev1.Pod, c *corev1.Container, restartCount int) map[string]string {
	a := map[string]string{
		AnnotationContainerHash:            HashContainer(c),
		AnnotationRestartCount:             strconv.Itoa(restartCount),
		AnnotationTerminationMessagePath:   c.TerminationMessagePath,
		AnnotationTerminationMessagePolicy: string(c.TerminationMessagePolicy),
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		a[AnnotationTerminationGracePeriod] = strconv.FormatInt(*g, 10)
	}
	if len(c.Ports) > 0 {
		if raw, err := json.Marshal(c.Ports); err == nil {
			a[AnnotationContainerPorts] = string(raw)
		}
	}
	if raw, err := json.Marshal(allocation.CPUMemory(c.Resources)); err == nil {
		a[AnnotationContainerResources] = string(raw)
	}
	return a
}

// identity is what the labels of a sandbox or container say about its pod.
type identity struct {
	uid       types.UID
	name      string
	namespace string
	container string
}

// identityOf reads the identity labels; ok is false for objects the agent
// does not manage: no pod UID label, or a UID, name or namespace that
// could not be the agent's (checkIdentity), which the agent then neither
// kills nor cleans up after.
func identityOf(labels map[string]string) (identity, bool) {
	id := identity{
		uid:       types.UID(labels[LabelPodUID]),
		name:      labels[LabelPodName],
		namespace: labels[LabelPodNamespace],
		container: labels[LabelContainerName],
	}
	return id, checkIdentity(id.namespace, id.name, id.uid) == nil
}

// restartCountOf reads the restart count annotation; a missing or garbled
// one counts as 0.
func restartCountOf(annotations map[string]string) int {
	n, err := strconv.Atoi(annotations[AnnotationRestartCount])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// gracePeriodOf reads the pod's termination grace period from a container's
// annotations, for pods killed without a spec.
func gracePeriodOf(annotations map[string]string) (int64, bool) {
	g, err := strconv.ParseInt(annotations[AnnotationTerminationGracePeriod], 10, 64)
	if err != nil || g < 0 {
		return 0, false
	}
	return g, true
}
