package runtime

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ContainerUsage is what one running container of the agent's pods uses,
// as the runtime measured it.
type ContainerUsage struct {
	ID, Name              string
	PodUID                types.UID
	PodName, PodNamespace string
	CPU                   time.Duration // cumulative CPU time
	CPUTime               time.Time     // when CPU was measured
	MemoryWorkingSet      uint64
	MemoryTime            time.Time
	// WritableLayer is the bytes the container wrote to its own layer.
	WritableLayer     uint64
	HasCPU, HasMemory bool
}

// ContainerStats asks the runtime what its running containers use; the
// containers of no pod of the agent's are left out.
func (r *Runtime) ContainerStats(ctx context.Context) ([]ContainerUsage, error) {
	stats, err := r.rt.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{})
	if err != nil {
		return nil, fmt.Errorf("listing container stats: %w", err)
	}
	out := make([]ContainerUsage, 0, len(stats))
	for _, s := range stats {
		id, ok := identityOf(s.GetAttributes().GetLabels())
		if !ok || id.container == "" {
			continue
		}
		u := ContainerUsage{ID: s.GetAttributes().GetId(), Name: id.container, PodUID: id.uid, PodName: id.name, PodNamespace: id.namespace}
		if cpu := s.GetCpu(); cpu.GetUsageCoreNanoSeconds() != nil {
			u.HasCPU = true
			u.CPU = time.Duration(cpu.GetUsageCoreNanoSeconds().GetValue()) // #nosec G115 -- nanoseconds of CPU time fit an int64 for 292 years
			u.CPUTime = time.Unix(0, cpu.GetTimestamp())
		}
		if mem := s.GetMemory(); mem.GetWorkingSetBytes() != nil {
			u.HasMemory = true
			u.MemoryWorkingSet = mem.GetWorkingSetBytes().GetValue()
			u.MemoryTime = time.Unix(0, mem.GetTimestamp())
		}
		u.WritableLayer = s.GetWritableLayer().GetUsedBytes().GetValue()
		out = append(out, u)
	}
	return out, nil
}

func (c *remoteCRI) ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	resp, err := c.rt.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: filter})
	return resp.GetStats(), err
}
