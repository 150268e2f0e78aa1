package nodeapi

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodeagent/nodeagent/internal/host"
)

// The network figures of /stats/summary, as the kubelet gives them: the
// cumulative counters of the node's interfaces (the host network
// namespace's, but loopback and the containers' veths) and of each pod's
// network namespace, read through one of its running containers' process.

// defaultInterface is the interface the kubelet reports as the node's or
// pod's own when there is one of the name; otherwise the first is.
const defaultInterface = "eth0"

// nodeNetwork are the host's interfaces' counters, or nil.
func (s *Server) nodeNetwork() *statsv1alpha1.NetworkStats {
	if s.opts.NodeInterfaces == nil {
		return nil
	}
	ifs, err := s.opts.NodeInterfaces()
	if err != nil {
		s.log.V(2).Info("reading the node's network interfaces", "err", err)
	}
	return networkStats(ifs, time.Now())
}

// podNetwork are the counters of the pod's network namespace, read
// through the process of its running container id; nil for a pod on the
// host's network (its counters are the node's) or unknown to the agent,
// or when they cannot be read.
func (s *Server) podNetwork(ctx context.Context, pod *corev1.Pod, id string) *statsv1alpha1.NetworkStats {
	if s.opts.PodInterfaces == nil || pod == nil || pod.Spec.HostNetwork || id == "" {
		return nil
	}
	pid, err := s.opts.Runtime.ContainerPID(ctx, id)
	if err != nil {
		s.log.V(2).Info("finding a pod's network namespace", "pod", pod.Namespace+"/"+pod.Name, "container", id, "err", err)
		return nil
	}
	ifs, err := s.opts.PodInterfaces(pid)
	if err != nil {
		s.log.V(2).Info("reading a pod's network interfaces", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
	return networkStats(ifs, time.Now())
}

// networkStats are the interfaces' counters, the default interface's
// also at the top; nil when there are none.
func networkStats(ifs []host.Interface, at time.Time) *statsv1alpha1.NetworkStats {
	if len(ifs) == 0 {
		return nil
	}
	out := &statsv1alpha1.NetworkStats{Time: metav1.NewTime(at), InterfaceStats: interfaceStats(ifs[0])}
	for _, i := range ifs {
		out.Interfaces = append(out.Interfaces, interfaceStats(i))
		if i.Name == defaultInterface {
			out.InterfaceStats = interfaceStats(i)
		}
	}
	return out
}

func interfaceStats(i host.Interface) statsv1alpha1.InterfaceStats {
	return statsv1alpha1.InterfaceStats{Name: i.Name, RxBytes: &i.RxBytes, RxErrors: &i.RxErrors, TxBytes: &i.TxBytes, TxErrors: &i.TxErrors}
}
