package nodeapi

import (
	"encoding/json"
	"net/http"

	"github.com/nodeagent/nodeagent/staging/podtypes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// servePods answers the node's pods, with their statuses, as a PodList.
func (s *Server) servePods(w http.ResponseWriter, _ *http.Request) {
	pods := s.opts.Pods()
	list := corev1.PodList{Items: make([]corev1.Pod, 0, len(pods))}
	list.APIVersion, list.Kind = "v1", "PodList"
	for _, p := range pods {
		list.Items = append(list.Items, *p)
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&list); err != nil {
		s.log.V(2).Info("writing /pods", "err", err)
	}
}

// findPod returns the node's pod namespace/name (and uid, when the path
// names one). Of two pods with one name (a static pod being replaced, a
// pod recreated under its name), the one still running wins.
func (s *Server) findPod(namespace, name string, uid types.UID) (*corev1.Pod, bool) {
	var found *corev1.Pod
	for _, p := range s.opts.Pods() {
		if p.Namespace != namespace || p.Name != name || (uid != "" && p.UID != uid) {
			continue
		}
		if found == nil || ended(found) && !ended(p) {
			found = p
		}
	}
	return found, found != nil
}

// ended: the pod is terminal or being deleted.
func ended(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil || podtypes.IsTerminal(p.Status.Phase)
}
