package nodeapi

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// serveSummary answers /stats/summary (nodes/stats) with the CPU, memory
// and filesystem figures the agent has: the node's, and each running
// container's and pod's from the runtime's stats (fsstats.go), and the
// node's and each pod's network counters (network.go). Process figures
// are not there yet. usageNanoCores is the rate since the previous
// request that saw the same container (or node, or pod), as the
// kubelet's is the rate over its last sampling interval; the first
// request has none.
func (s *Server) serveSummary(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), statsTimeout)
	defer cancel()
	sum := statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: s.opts.NodeName}, Pods: []statsv1alpha1.PodStats{}}
	seen := map[string]bool{}
	u, err := s.opts.NodeUsage()
	if err != nil {
		http.Error(w, "reading the node's usage: "+err.Error(), http.StatusInternalServerError)
		return
	}
	sum.Node.CPU = s.rates.cpu("node", u.CPU, u.Time, seen)
	sum.Node.Memory = memory(uint64(max(u.MemoryWorkingSet, 0)), u.Time) // #nosec G115 -- not negative
	stats, err := s.opts.Runtime.ContainerStats(ctx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	sum.Node.Network = s.nodeNetwork()
	fss := s.readFilesystems(ctx)
	sum.Node.Fs = fss.node
	if fss.image != nil {
		sum.Node.Runtime = &statsv1alpha1.RuntimeStats{ImageFs: fss.image}
	}
	fsAt := metav1.Now()
	specs := map[types.UID]*corev1.Pod{}
	for _, p := range s.opts.Pods() {
		specs[p.UID] = p
	}
	type podSum struct {
		stats          statsv1alpha1.PodStats
		cpu            time.Duration
		mem            uint64
		cpuAt, memAt   time.Time
		hasCPU, hasMem bool
		ephemeral      uint64
		firstID        string // a running container's, whose namespace is the pod's
	}
	pods := map[types.UID]*podSum{}
	var order []types.UID
	for _, c := range stats {
		p := pods[c.PodUID]
		if p == nil {
			p = &podSum{firstID: c.ID, stats: statsv1alpha1.PodStats{
				PodRef:     statsv1alpha1.PodReference{Name: c.PodName, Namespace: c.PodNamespace, UID: string(c.PodUID)},
				Containers: []statsv1alpha1.ContainerStats{},
			}}
			if spec := specs[c.PodUID]; spec != nil && spec.Status.StartTime != nil {
				p.stats.StartTime = *spec.Status.StartTime
			}
			pods[c.PodUID] = p
			order = append(order, c.PodUID)
		}
		cs := statsv1alpha1.ContainerStats{Name: c.Name}
		var used uint64
		cs.Rootfs, cs.Logs, used = s.containerFs(fss, specs[c.PodUID], c, fsAt)
		p.ephemeral += used
		if c.HasCPU {
			cs.CPU = s.rates.cpu("container/"+c.ID, c.CPU, c.CPUTime, seen)
			p.cpu, p.cpuAt, p.hasCPU = p.cpu+c.CPU, later(p.cpuAt, c.CPUTime), true
		}
		if c.HasMemory {
			cs.Memory = memory(c.MemoryWorkingSet, c.MemoryTime)
			p.mem, p.memAt, p.hasMem = p.mem+c.MemoryWorkingSet, later(p.memAt, c.MemoryTime), true
		}
		p.stats.Containers = append(p.stats.Containers, cs)
	}
	for _, uid := range order {
		p := pods[uid]
		if p.hasCPU {
			p.stats.CPU = s.rates.cpu("pod/"+string(uid), p.cpu, p.cpuAt, seen)
		}
		if p.hasMem {
			p.stats.Memory = memory(p.mem, p.memAt)
		}
		var volumes uint64
		p.stats.VolumeStats, volumes = s.volumes(fss, specs[uid], fsAt)
		p.stats.EphemeralStorage = usage(fss.node, p.ephemeral+volumes, fsAt)
		p.stats.Network = s.podNetwork(ctx, specs[uid], p.firstID)
		sum.Pods = append(sum.Pods, p.stats)
	}
	s.rates.forgetUnseen(seen)
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&sum); err != nil {
		s.log.V(2).Info("writing /stats/summary", "err", err)
	}
}

func memory(workingSet uint64, at time.Time) *statsv1alpha1.MemoryStats {
	return &statsv1alpha1.MemoryStats{Time: metav1.NewTime(at), WorkingSetBytes: &workingSet}
}

// cpuRates keeps the last CPU sample of each node, pod and container, to
// give the next request a rate.
type cpuRates struct {
	mu   sync.Mutex
	last map[string]cpuSample
}

type cpuSample struct {
	usage time.Duration
	at    time.Time
}

func (c *cpuRates) cpu(key string, usage time.Duration, at time.Time, seen map[string]bool) *statsv1alpha1.CPUStats {
	seen[key] = true
	total := uint64(max(usage, 0)) // #nosec G115 -- not negative
	st := &statsv1alpha1.CPUStats{Time: metav1.NewTime(at), UsageCoreNanoSeconds: &total}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]cpuSample{}
	}
	if prev, ok := c.last[key]; ok && at.After(prev.at) && usage >= prev.usage {
		rate := uint64(float64(usage-prev.usage) / at.Sub(prev.at).Seconds())
		st.UsageNanoCores = &rate
	}
	if prev, ok := c.last[key]; !ok || at.After(prev.at) {
		c.last[key] = cpuSample{usage: usage, at: at}
	}
	return st
}

// forgetUnseen drops the samples of what the last request did not see
// (containers and pods gone), so that the map does not grow.
func (c *cpuRates) forgetUnseen(seen map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.last {
		if !seen[k] {
			delete(c.last, k)
		}
	}
}
