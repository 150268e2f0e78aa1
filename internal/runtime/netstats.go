package runtime

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodNetwork is what a pod's network namespace has carried, as the
// runtime counts it from the namespace's interfaces.
type PodNetwork struct {
	Time time.Time
	// Default is the pod's default interface (eth0), Interfaces every one.
	Default    InterfaceUsage
	Interfaces []InterfaceUsage
}

// InterfaceUsage are one interface's cumulative counters.
type InterfaceUsage struct {
	Name                                 string
	RxBytes, RxErrors, TxBytes, TxErrors uint64
}

// PodNetworks asks the runtime for its ready sandboxes' network counters
// (CRI ListPodSandboxStats), by pod UID; pods whose runtime gives none
// (a host-network pod, a runtime without sandbox stats) are left out.
func (r *Runtime) PodNetworks(ctx context.Context) (map[types.UID]PodNetwork, error) {
	stats, err := r.rt.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{})
	if err != nil {
		return nil, fmt.Errorf("listing pod sandbox stats: %w", err)
	}
	out := map[types.UID]PodNetwork{}
	for _, s := range stats {
		id, ok := identityOf(s.GetAttributes().GetLabels())
		n := s.GetLinux().GetNetwork()
		if !ok || n == nil || n.GetDefaultInterface() == nil {
			continue
		}
		if prev, seen := out[id.uid]; seen && !prev.Time.Before(time.Unix(0, n.GetTimestamp())) {
			continue // a newer sandbox of the pod was seen
		}
		pn := PodNetwork{Time: time.Unix(0, n.GetTimestamp()), Default: interfaceUsage(n.GetDefaultInterface())}
		for _, i := range n.GetInterfaces() {
			pn.Interfaces = append(pn.Interfaces, interfaceUsage(i))
		}
		out[id.uid] = pn
	}
	return out, nil
}

func interfaceUsage(i *runtimeapi.NetworkInterfaceUsage) InterfaceUsage {
	return InterfaceUsage{
		Name:    i.GetName(),
		RxBytes: i.GetRxBytes().GetValue(), RxErrors: i.GetRxErrors().GetValue(),
		TxBytes: i.GetTxBytes().GetValue(), TxErrors: i.GetTxErrors().GetValue(),
	}
}

func (c *remoteCRI) ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	resp, err := c.rt.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{Filter: filter})
	return resp.GetStats(), err
}
