package mirror

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Build returns the mirror pod for a static pod: a deep copy with the
// mirror annotation set to the static pod's hash and owner as its only owner
// reference. Fields the apiserver assigns on create are cleared. The static
// pod is not modified.
func Build(static *corev1.Pod, owner metav1.OwnerReference) *corev1.Pod {
	pod := static.DeepCopy()
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[podtypes.ConfigMirrorAnnotationKey] = StaticPodHash(static)
	pod.OwnerReferences = []metav1.OwnerReference{owner}
	pod.UID = ""
	pod.ResourceVersion = ""
	pod.Status = corev1.PodStatus{}
	return pod
}
