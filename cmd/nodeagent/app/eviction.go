package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/cgroups"
	"github.com/nodeagent/nodeagent/internal/containergc"
	"github.com/nodeagent/nodeagent/internal/eviction"
	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/imagegc"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/volumes"
)

// Eviction is the eviction policy, under the kubelet's flag names and
// defaults.
type Eviction struct {
	Hard, Soft, SoftGracePeriods, MinimumReclaim string
	MaxPodGracePeriod                            int64
	// PressureTransition is how long a pressure condition stays True
	// after its signals recover.
	PressureTransition time.Duration
	// MonitoringInterval is the kubelet's fixed 10 seconds; a hidden flag
	// lets tests shorten it.
	MonitoringInterval time.Duration
}

func defaultEviction() Eviction {
	return Eviction{
		Hard:               eviction.DefaultThresholds,
		PressureTransition: eviction.DefaultPressureTransition,
		MonitoringInterval: eviction.DefaultInterval,
	}
}

func (o *Options) addEvictionFlags(fs *pflag.FlagSet) {
	e := &o.Eviction
	fs.StringVar(&e.Hard, "eviction-hard", e.Hard, "thresholds that, once met, evict pods at once (one second to stop), signal<value,...: memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, pid.available, each a quantity or a percentage; they also come off allocatable, and memory.available also bounds what the pods' cgroup may take of the memory allocatable to pods")
	fs.StringVar(&e.Soft, "eviction-soft", e.Soft, "thresholds that evict pods once met for their grace period (--eviction-soft-grace-period), as --eviction-hard")
	fs.StringVar(&e.SoftGracePeriods, "eviction-soft-grace-period", e.SoftGracePeriods, "how long each soft threshold must be met before pods are evicted, signal=duration,...")
	fs.Int64Var(&e.MaxPodGracePeriod, "eviction-max-pod-grace-period", e.MaxPodGracePeriod, "the most seconds a pod evicted for a soft threshold is given to stop (its own grace period if shorter; negative: its own)")
	fs.StringVar(&e.MinimumReclaim, "eviction-minimum-reclaim", e.MinimumReclaim, "how much more than a threshold's bound must be available again before the threshold counts as resolved, signal=value,...")
	fs.DurationVar(&e.PressureTransition, "eviction-pressure-transition-period", e.PressureTransition, "how long a pressure condition stays True after its signal recovers")
	fs.DurationVar(&e.MonitoringInterval, "eviction-monitoring-interval", e.MonitoringInterval, "time between observations of the eviction signals")
	_ = fs.MarkHidden("eviction-monitoring-interval") // the flag was just defined
}

// evictionPolicy is the policy as the eviction manager takes it, and an
// error naming each flag that is wrong.
func (o *Options) evictionPolicy() (eviction.Options, error) {
	e := o.Eviction
	var p eviction.Options
	var errs []error
	var err error
	if p.Hard, err = eviction.ParseThresholds(e.Hard); err != nil {
		errs = append(errs, fmt.Errorf("--eviction-hard: %w", err))
	}
	if p.Soft, err = eviction.ParseThresholds(e.Soft); err != nil {
		errs = append(errs, fmt.Errorf("--eviction-soft: %w", err))
	}
	if p.SoftGracePeriods, err = eviction.ParseGracePeriods(e.SoftGracePeriods); err != nil {
		errs = append(errs, fmt.Errorf("--eviction-soft-grace-period: %w", err))
	}
	if p.MinimumReclaim, err = eviction.ParseMinimumReclaim(e.MinimumReclaim); err != nil {
		errs = append(errs, fmt.Errorf("--eviction-minimum-reclaim: %w", err))
	}
	for name, d := range map[string]time.Duration{"--eviction-pressure-transition-period": e.PressureTransition, "--eviction-monitoring-interval": e.MonitoringInterval} {
		if d <= 0 { // the manager's own zero means its default
			errs = append(errs, fmt.Errorf("%s must be positive, not %v", name, d))
		}
	}
	p.MaxPodGracePeriod, p.Interval, p.PressureTransition = e.MaxPodGracePeriod, e.MonitoringInterval, e.PressureTransition
	if len(errs) == 0 {
		if err := p.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("--eviction-soft, --eviction-soft-grace-period: %w", err))
		}
	}
	return p, errors.Join(errs...)
}

func (o *Options) validateEviction() []error {
	if _, err := o.evictionPolicy(); err != nil {
		return []error{err}
	}
	return nil
}

// evictionParts are what the eviction manager watches and acts through.
type evictionParts struct {
	rt      *runtime.Runtime
	cgroups *cgroups.Manager
	vols    *volumes.Manager
	agent   *agent.Agent
	gc      *containergc.Collector
	imageGC *imagegc.Manager
	machine node.Machine
	reg     metrics.KubeRegistry
}

// newEviction builds the eviction manager: the pods' memory is measured
// in their cgroup against what is allocatable to them, and the disk is
// reclaimed from dead containers and unused images before a pod goes.
func (o *Options) newEviction(p evictionParts, log logr.Logger) (*eviction.Manager, error) {
	opts, _ := o.evictionPolicy() // validated
	podsMemory := p.cgroups.PodsMemoryDir()
	observer := eviction.Observer{
		NodeDir: o.RootDir, ImageDirs: p.rt.ImageFilesystems,
		PodsMemoryDir: podsMemory, PodsAllocatable: node.PodsMemory(p.machine, o.reserved()),
	}
	opts.Observe = observer.Observe
	opts.PodsMemoryDir = podsMemory
	opts.Pods = p.agent.Evictable
	opts.Usage = func(ctx context.Context, pods []*corev1.Pod) (map[types.UID]eviction.PodUsage, error) {
		return podUsage(ctx, p.rt, p.vols, pods)
	}
	opts.ReclaimDisk = func(ctx context.Context) error {
		p.gc.Collect(ctx)
		_, err := p.imageGC.FreeUnused(ctx)
		return err
	}
	opts.Evict, opts.Reclaimed = p.agent.Evict, p.agent.Reclaimed
	opts.Registry, opts.Logger = p.reg, log.WithName("eviction")
	return eviction.New(opts)
}

// podUsage is what each pod uses: its containers' memory working sets
// and writable layers from the runtime, their logs, and its emptyDirs on
// disk.
func podUsage(ctx context.Context, rt *runtime.Runtime, vols *volumes.Manager, pods []*corev1.Pod) (map[types.UID]eviction.PodUsage, error) {
	stats, err := rt.ContainerStats(ctx)
	if err != nil {
		return nil, err
	}
	out := map[types.UID]eviction.PodUsage{}
	of := func(uid types.UID) eviction.PodUsage {
		u, ok := out[uid]
		if !ok {
			u = eviction.PodUsage{ContainerMemory: map[string]int64{}, ContainerEphemeral: map[string]int64{}, Volumes: map[string]int64{}}
		}
		return u
	}
	for _, c := range stats {
		u := of(c.PodUID)
		ws := int64(min(c.MemoryWorkingSet, math.MaxInt64)) // #nosec G115 -- bounded above
		u.Memory += ws
		u.ContainerMemory[c.Name] += ws
		u.ContainerEphemeral[c.Name] += int64(min(c.WritableLayer, math.MaxInt64)) // #nosec G115 -- bounded above
		out[c.PodUID] = u
	}
	for _, pod := range pods {
		u := of(pod.UID)
		logs := rt.PodLogDir(pod)
		for name := range u.ContainerEphemeral {
			u.ContainerEphemeral[name] += host.FilesSize(filepath.Join(logs, name))
		}
		for _, v := range pod.Spec.Volumes {
			if !eviction.DiskEmptyDir(v) {
				continue
			}
			if used, err := vols.EmptyDirUsage(pod.UID, v.Name, math.MaxInt64); err == nil {
				u.Volumes[v.Name] = used
			}
		}
		out[pod.UID] = u
	}
	return out, nil
}
