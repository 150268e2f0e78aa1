package nodeapi

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/status"
)

// /metrics/resource: what metrics-server scrapes for `kubectl top`, under
// the kubelet's names, each figure stamped with when it was measured:
// the node's CPU time and memory working set, and each running
// container's and pod's (a pod's is the sum of its containers'), as the
// runtime measured them, and when each running container started (from
// its pod's status, when that status is of the same instance): with it
// metrics-server tells a restarted container, whose CPU counter began
// again, from one whose counter went backwards, and drops the old
// instance's figure instead of the pod. It is made for each scrape:
// nothing is kept.

const statsTimeout = 10 * time.Second

var (
	descNodeCPU = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	descNodeMemory = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node in bytes", nil, nil)
	descContainerCPU = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	descContainerMemory = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	descPodCPU = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	descPodMemory = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	descContainerStart = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	descScrapeError = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// serveResourceMetrics answers one scrape.
func (s *Server) serveResourceMetrics(w http.ResponseWriter, r *http.Request) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(resourceCollector{s: s, ctx: r.Context()})
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

type resourceCollector struct {
	s   *Server
	ctx context.Context
}

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNodeCPU, descNodeMemory, descContainerCPU, descContainerMemory, descContainerStart, descPodCPU, descPodMemory, descScrapeError} {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	failed := 0.0
	if u, err := c.s.opts.NodeUsage(); err != nil {
		c.s.log.V(2).Info("reading the node's usage", "err", err)
		failed = 1
	} else {
		ch <- stamped(descNodeCPU, prometheus.CounterValue, u.CPU.Seconds(), u.Time)
		ch <- stamped(descNodeMemory, prometheus.GaugeValue, float64(u.MemoryWorkingSet), u.Time)
	}

	ctx, cancel := context.WithTimeout(c.ctx, statsTimeout)
	defer cancel()
	stats, err := c.s.opts.Runtime.ContainerStats(ctx)
	if err != nil {
		c.s.log.V(2).Info("reading the containers' usage", "err", err)
		failed = 1
	}
	type podUsage struct {
		name, namespace   string
		cpu, memory       float64
		cpuTime, memTime  time.Time
		hasCPU, hasMemory bool
	}
	pods := map[types.UID]*podUsage{}
	started := c.s.containerStarts()
	for _, u := range stats {
		if at, ok := started[u.ID]; ok {
			// No timestamp: the value is itself a time, as the kubelet's.
			ch <- prometheus.MustNewConstMetric(descContainerStart, prometheus.GaugeValue,
				float64(at.UnixNano())/float64(time.Second), u.Name, u.PodName, u.PodNamespace)
		}
		p := pods[u.PodUID]
		if p == nil {
			p = &podUsage{name: u.PodName, namespace: u.PodNamespace}
			pods[u.PodUID] = p
		}
		if u.HasCPU {
			ch <- stamped(descContainerCPU, prometheus.CounterValue, u.CPU.Seconds(), u.CPUTime, u.Name, u.PodName, u.PodNamespace)
			p.cpu, p.hasCPU = p.cpu+u.CPU.Seconds(), true
			p.cpuTime = later(p.cpuTime, u.CPUTime)
		}
		if u.HasMemory {
			ch <- stamped(descContainerMemory, prometheus.GaugeValue, float64(u.MemoryWorkingSet), u.MemoryTime, u.Name, u.PodName, u.PodNamespace)
			p.memory, p.hasMemory = p.memory+float64(u.MemoryWorkingSet), true
			p.memTime = later(p.memTime, u.MemoryTime)
		}
	}
	for _, p := range pods {
		if p.hasCPU {
			ch <- stamped(descPodCPU, prometheus.CounterValue, p.cpu, p.cpuTime, p.name, p.namespace)
		}
		if p.hasMemory {
			ch <- stamped(descPodMemory, prometheus.GaugeValue, p.memory, p.memTime, p.name, p.namespace)
		}
	}
	ch <- prometheus.MustNewConstMetric(descScrapeError, prometheus.GaugeValue, failed)
}

// containerStarts is when each running container of the node's pods
// started, by its runtime ID, as the pods' statuses say.
func (s *Server) containerStarts() map[string]time.Time {
	started := map[string]time.Time{}
	for _, p := range s.opts.Pods() {
		for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
			for _, cs := range list {
				if r := cs.State.Running; r != nil && cs.ContainerID != "" && !r.StartedAt.IsZero() {
					started[status.RuntimeID(cs.ContainerID)] = r.StartedAt.Time
				}
			}
		}
	}
	return started
}

func stamped(d *prometheus.Desc, t prometheus.ValueType, v float64, at time.Time, labels ...string) prometheus.Metric {
	return prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(d, t, v, labels...))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
