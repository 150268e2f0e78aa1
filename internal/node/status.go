package node

import (
	"context"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/uidpatch"
)

// featureWebSocketsToNode is the feature a Node declares when its API
// serves kubectl's WebSocket streams (exec, attach, port-forward) itself.
const featureWebSocketsToNode = "ExtendWebSocketsToKubelet"

// desiredStatus is base's status with every field the agent owns set to
// what it measures now. Conditions that others own (a network plugin's
// NetworkUnavailable, say) are kept; the agent's own keep their
// transition and heartbeat times while their status holds.
func (n *Node) desiredStatus(ctx context.Context, base *corev1.Node) (corev1.NodeStatus, error) {
	now := n.clock.Now()
	var ready readiness
	health, err := n.opts.Runtime.Health(ctx)
	switch {
	case err != nil:
		ready.add(reasonRuntimeNotReady, fmt.Sprintf("the container runtime does not answer: %v", err))
	default:
		if !health.RuntimeReady {
			ready.add(reasonRuntimeNotReady, "container runtime not ready: "+health.RuntimeProblem)
		}
		if !health.NetworkReady {
			ready.add(reasonNetworkNotReady, "container runtime network not ready: "+health.NetworkProblem)
		}
	}
	if err := n.opts.AgentHealth(); err != nil {
		ready.add(reasonAgentNotHealthy, err.Error())
	}
	if err := n.opts.SourcesReady(); err != nil {
		ready.add(reasonSourcesNotReady, err.Error())
	}

	nodefs, err := host.StatFS(n.opts.RootDir)
	if err != nil {
		return corev1.NodeStatus{}, fmt.Errorf("measuring the node filesystem: %w", err)
	}
	var pressure map[string]bool
	if n.opts.Pressure != nil {
		pressure = n.opts.Pressure()
	}

	st := *base.Status.DeepCopy()
	st.Capacity = capacity(n.opts.Machine, nodefs, n.opts.MaxPods)
	st.Allocatable = allocatable(st.Capacity, n.opts.Reserved, n.opts.Thresholds)
	own := append([]corev1.NodeCondition{ready.condition()}, pressureConditions(pressure)...)
	carryTransitions(now, own, base.Status.Conditions)
	st.Conditions = mergeConditions(base.Status.Conditions, own)
	st.Addresses = n.addresses()
	m := n.opts.Machine
	v := n.opts.Runtime.Version()
	st.NodeInfo = corev1.NodeSystemInfo{
		MachineID: m.MachineID, SystemUUID: m.SystemUUID, BootID: m.BootID,
		KernelVersion: m.KernelVersion, OSImage: m.OSImage,
		ContainerRuntimeVersion: v.RuntimeName + "://" + v.RuntimeVersion,
		KubeletVersion:          n.opts.AgentVersion,
		OperatingSystem:         m.OperatingSystem, Architecture: m.Architecture,
	}
	// The node API's port (logs, exec, port-forward), or 0 when it is not
	// served: the apiserver reaches the node there.
	st.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: n.opts.APIPort}}
	// The node API translates kubectl's WebSocket streams itself, as the
	// kubelet's does: declared, the apiserver passes them through.
	st.DeclaredFeatures = nil
	if n.opts.APIPort != 0 {
		st.DeclaredFeatures = []string{featureWebSocketsToNode}
	}
	return st, nil
}

// mergeConditions replaces the conditions of own's types in base, in
// place, and appends the ones base lacks.
func mergeConditions(base, own []corev1.NodeCondition) []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, 0, len(base)+len(own))
	placed := map[corev1.NodeConditionType]bool{}
	for _, c := range base {
		for _, o := range own {
			if o.Type == c.Type {
				c = o
				placed[o.Type] = true
			}
		}
		out = append(out, c)
	}
	for _, o := range own {
		if !placed[o.Type] {
			out = append(out, o)
		}
	}
	return out
}

func stampHeartbeats(conds []corev1.NodeCondition, now time.Time) {
	for i := range conds {
		conds[i].LastHeartbeatTime = metav1.NewTime(now)
	}
}

func statusEqual(a, b corev1.NodeStatus) bool { return equality.Semantic.DeepEqual(a, b) }

// markWritten records when the status was last written.
func (n *Node) markWritten(at time.Time) {
	n.mu.Lock()
	n.lastWrite, n.heartbeatDue = at, false
	n.mu.Unlock()
}

// patchStatus writes want as cur's status, with a heartbeat of now.
func (n *Node) patchStatus(ctx context.Context, cur *corev1.Node, want corev1.NodeStatus, now time.Time) (*corev1.Node, error) {
	next := cur.DeepCopy()
	next.Status = want
	stampHeartbeats(next.Status.Conditions, now)
	patch, err := uidpatch.TwoWay(cur, next, cur.UID)
	if err != nil {
		return nil, err
	}
	patched, err := n.client.CoreV1().Nodes().Patch(ctx, n.opts.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("patching the Node status: %w", err)
	}
	return patched, nil
}

// addresses are the InternalIP (the configured one, or the first global
// address of an interface that is up) and the Hostname.
func (n *Node) addresses() []corev1.NodeAddress {
	var out []corev1.NodeAddress
	if ip := InternalIP(n.opts.NodeIP); ip != nil {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
	}
	if h := n.opts.Machine.Hostname; h != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: h})
	}
	return out
}

// InternalIP is the node's InternalIP: the configured one (--node-ip), or
// else the first global address of an interface that is up; nil if there
// is none.
func InternalIP(configured net.IP) net.IP {
	if configured != nil {
		return configured
	}
	return firstGlobalIP()
}

// firstGlobalIP prefers IPv4, as the kubelet does when it has to guess.
func firstGlobalIP() net.IP {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var v6 net.IP
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ipn.IP.To4() != nil {
				return ipn.IP
			}
			if v6 == nil {
				v6 = ipn.IP
			}
		}
	}
	return v6
}
