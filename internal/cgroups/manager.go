package cgroups

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ErrNoSystemd is New's error for the systemd driver on a machine that
// does not run systemd.
var ErrNoSystemd = errors.New("the systemd cgroup driver needs systemd running as init (no /run/systemd/system); use --cgroup-driver=cgroupfs")

// Options configure a Manager.
type Options struct {
	// Root is the cgroup under which kubepods is made (default /nodeagent),
	// in cgroupfs form whatever the driver.
	Root string
	// FS is where the cgroup hierarchies are mounted (default
	// /sys/fs/cgroup).
	FS string
	// Driver names the cgroups (default cgroupfs).
	Driver Driver
	// Registry, when set, gets kubelet_cgroup_manager_duration_seconds.
	Registry metrics.KubeRegistry
	Logger   logr.Logger
}

// Manager keeps the pods' cgroups. It is safe for concurrent use.
type Manager struct {
	opts     Options
	v2       bool
	kubepods name
	log      logr.Logger
	metrics  *managerMetrics

	mu sync.Mutex
	// burstable holds the CPU requests (milli-CPU) of the Burstable pods
	// the agent runs, whose sum is the burstable cgroup's shares.
	burstable map[types.UID]int64
	shares    uint64 // last written to the burstable cgroup

	// inTree holds the pods found not to have a cgroup of the flat layout
	// of earlier versions: this one never makes one, so none appears later
	// and PodParent need not look again (a look lists every hierarchy, and
	// each pod's resync asks). RemovePod forgets the pod.
	treeMu sync.Mutex
	inTree map[types.UID]bool
}

// New returns a Manager of the cgroups under opts.Root, with the cgroup
// version found under opts.FS. An unknown driver is refused
// (ErrUnknownDriver), and the systemd driver where systemd is not running
// (ErrNoSystemd).
func New(opts Options) (*Manager, error) {
	if err := opts.Driver.Validate(); err != nil {
		return nil, err
	}
	if opts.Driver == DriverSystemd {
		if _, err := os.Stat("/run/systemd/system"); err != nil {
			return nil, ErrNoSystemd
		}
	}
	m := newManager(opts)
	var err error
	if m.metrics, err = newMetrics(opts.Registry); err != nil {
		return nil, fmt.Errorf("cgroup manager metrics: %w", err)
	}
	return m, nil
}

func newManager(opts Options) *Manager {
	if opts.Root == "" {
		opts.Root = "/nodeagent"
	}
	if opts.FS == "" {
		opts.FS = "/sys/fs/cgroup"
	}
	if opts.Driver == "" {
		opts.Driver = DriverCgroupfs
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	_, err := os.Stat(filepath.Join(opts.FS, "cgroup.controllers"))
	inert, _ := newMetrics(nil) // without a registry it cannot fail
	return &Manager{
		metrics:   inert,
		opts:      opts,
		v2:        err == nil,
		kubepods:  rootName(opts.Root).child(kubepods),
		log:       opts.Logger.WithName("cgroups"),
		burstable: map[types.UID]int64{}, inTree: map[types.UID]bool{},
	}
}

// Setup makes the QoS cgroups, or gives existing ones their limits again:
// kubepods, its burstable child, and its besteffort child with the
// fewest CPU shares there are.
func (m *Manager) Setup() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range []struct {
		n name
		l limits
	}{
		{m.kubepods, limits{}},
		{m.qosName(corev1.PodQOSBurstable), limits{shares: m.burstableShares()}},
		{m.qosName(corev1.PodQOSBestEffort), limits{shares: minShares}},
	} {
		if err := m.create(q.n, q.l); err != nil {
			return err
		}
	}
	m.shares = m.burstableShares()
	m.log.V(1).Info("QoS cgroups ready", "kubepods", m.kubepods.path(m.opts.Driver), "driver", m.opts.Driver, "v2", m.v2)
	return nil
}

// PodsMemoryDir is the directory of kubepods, the cgroup of every pod, in
// the memory controller (cgroup v1) or the unified hierarchy (v2), where
// the eviction manager reads what the pods use.
func (m *Manager) PodsMemoryDir() string {
	if m.v2 {
		return m.dirs(m.kubepods)[""]
	}
	return m.dirs(m.kubepods)["memory"]
}

// PodParent is the pod's cgroup in the driver's form, which the runtime is
// given as the sandbox's cgroup parent. A pod started by an earlier
// version keeps its flat <root>/pod<uid> until it is removed, so that its
// containers stay beside its sandbox.
func (m *Manager) PodParent(pod *corev1.Pod) string {
	if m.isFlat(pod.UID) {
		return m.flatName(pod.UID).path(DriverCgroupfs)
	}
	return m.podName(podtypes.QOSClass(pod), pod.UID).path(m.opts.Driver)
}

// isFlat tells whether the pod has a cgroup of the flat layout, which only
// an earlier version, before this process started, can have made.
func (m *Manager) isFlat(uid types.UID) bool {
	m.treeMu.Lock()
	inTree := m.inTree[uid]
	m.treeMu.Unlock()
	switch {
	case inTree:
		return false
	case m.exists(m.flatName(uid)):
		return true
	}
	m.treeMu.Lock()
	m.inTree[uid] = true
	m.treeMu.Unlock()
	return false
}

// flatName is a pod's cgroup in the layout before the QoS tree.
func (m *Manager) flatName(uid types.UID) name {
	return rootName(m.opts.Root).child(podPrefix + string(uid))
}

// exists tells whether cgroup n (cgroupfs form) is in any hierarchy.
func (m *Manager) exists(n name) bool {
	p := n.path(DriverCgroupfs)
	if m.v2 {
		_, err := os.Stat(filepath.Join(m.opts.FS, p))
		return err == nil
	}
	found, _ := filepath.Glob(filepath.Join(m.opts.FS, "*", p))
	return len(found) > 0
}

// EnsurePod makes the pod's cgroup with the pod's limits, or gives an
// existing one its limits again, and counts the pod in its QoS class.
func (m *Manager) EnsurePod(pod *corev1.Pod) error {
	class := podtypes.QOSClass(pod)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.isFlat(pod.UID) { // else PodParent keeps the pod there
		if err := m.create(m.podName(class, pod.UID), podLimits(pod)); err != nil {
			return err
		}
	}
	if class != corev1.PodQOSBurstable {
		return nil
	}
	m.burstable[pod.UID] = podTotal(pod, corev1.ResourceCPU, requests).milliValue()
	return m.updateBurstable()
}

// TrackPod counts a running pod in its QoS class without touching its
// cgroup: for pods found running when the agent starts.
func (m *Manager) TrackPod(pod *corev1.Pod) error {
	if podtypes.QOSClass(pod) != corev1.PodQOSBurstable {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	milli := podTotal(pod, corev1.ResourceCPU, requests).milliValue()
	if old, ok := m.burstable[pod.UID]; ok && old == milli {
		return nil
	}
	m.burstable[pod.UID] = milli
	return m.updateBurstable()
}

// RemovePod removes the pod's cgroups, wherever a QoS class or an earlier
// layout put them, and stops counting the pod. The runtime must have
// removed the pod's containers and sandboxes first.
func (m *Manager) RemovePod(ctx context.Context, uid types.UID) error {
	var errs []error
	start := time.Now()
	for _, n := range m.podNames(uid) {
		errs = append(errs, removeCgroups(ctx, m.opts.FS, n))
	}
	// One pod's cgroup destroyed, as the kubelet counts it, wherever it was.
	m.metrics.since(opDestroy, start)
	m.treeMu.Lock()
	delete(m.inTree, uid)
	m.treeMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.burstable[uid]; ok {
		delete(m.burstable, uid)
		errs = append(errs, m.updateBurstable())
	}
	return errors.Join(errs...)
}

// podNames are every cgroup the pod may have: one per QoS class, and the
// flat <root>/pod<uid> of versions before the QoS tree.
func (m *Manager) podNames(uid types.UID) []string {
	out := []string{m.flatName(uid).path(DriverCgroupfs)}
	for _, class := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		out = append(out, m.podName(class, uid).path(m.opts.Driver))
	}
	return out
}

// updateBurstable writes the burstable cgroup's shares when the sum of the
// Burstable pods' requests changed. The caller holds m.mu.
func (m *Manager) updateBurstable() error {
	shares := m.burstableShares()
	if shares == m.shares {
		return nil
	}
	n := m.qosName(corev1.PodQOSBurstable)
	err := m.update(n, limits{shares: shares})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no Setup yet: it will write them
	}
	if err != nil {
		return fmt.Errorf("burstable cgroup's CPU shares: %w", err)
	}
	m.shares = shares
	return nil
}

func (m *Manager) burstableShares() uint64 {
	var milli int64
	for _, v := range m.burstable {
		milli += v
	}
	return milliCPUToShares(milli)
}
