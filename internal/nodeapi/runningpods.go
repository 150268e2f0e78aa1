package nodeapi

import (
	"context"
	"encoding/json"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// serveRunningPods answers the pods the runtime runs, as a PodList in
// the kubelet's way: what the runtime knows of each pod that has a ready
// sandbox or a running container (its UID, name, namespace, and each
// running container's name and image), not the pods the node is asked to
// run (/pods). The kubelet keeps it for tests; it shows what is left
// behind on the node.
func (s *Server) serveRunningPods(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), statsTimeout)
	defer cancel()
	pods, err := s.opts.Runtime.GetPods(ctx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	list := corev1.PodList{Items: []corev1.Pod{}}
	list.APIVersion, list.Kind = "v1", "PodList"
	for _, p := range pods {
		if pod, ok := runningPod(p); ok {
			list.Items = append(list.Items, pod)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&list); err != nil {
		s.log.V(2).Info("writing /runningpods/", "err", err)
	}
}

// runningPod is the API form of what runs of p, if anything does.
func runningPod(p *runtime.Pod) (corev1.Pod, bool) {
	pod := corev1.Pod{}
	pod.UID, pod.Name, pod.Namespace = p.ID, p.Name, p.Namespace
	running := false
	for _, sb := range p.Sandboxes {
		running = running || sb.State == runtime.SandboxReady
	}
	for _, c := range p.Containers {
		if c.State == runtime.ContainerStateRunning {
			running = true
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
		}
	}
	return pod, running
}
