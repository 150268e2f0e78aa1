package statusmanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/uidpatch"
	"github.com/nodeagent/nodeagent/internal/workqueuerun"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The defaults of Options.
const (
	// A watch that shows another version than the one written, this soon
	// after the write, is taken to lag behind it rather than to show
	// someone else's write.
	defaultWatchLag = 2 * time.Second
)

// Options configure a Manager. Pods and Statuses are required.
type Options struct {
	// Pods holds the targets: mirror pods and API pods as the apiserver
	// source's watch last showed them.
	Pods     *podmanager.Manager
	Statuses *status.Store
	// ResyncInterval is how often every status is compared with what the
	// watch shows.
	ResyncInterval time.Duration
	// Finished reports whether nothing of the pod runs any more and its
	// volumes are gone. An API pod whose deletion was requested is deleted
	// from the apiserver (grace 0, UID precondition) once it is finished
	// and its final status written. Nil: never.
	Finished func(types.UID) bool
	// Written, if not nil, is told that the apiserver holds the status
	// of the pod (by the UID the agent runs it under) as of the status
	// store's generation gen: written now, or found there.
	Written func(uid types.UID, gen uint64)
	Metrics *Metrics
	Logger  logr.Logger
	Clock   clock.WithTicker
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid status manager options")

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field; a zero ResyncInterval means the
// default.
func (o Options) validate() error {
	var errs []error
	if o.Pods == nil {
		errs = append(errs, fmt.Errorf("%w: Pods is required", ErrInvalidOptions))
	}
	if o.Statuses == nil {
		errs = append(errs, fmt.Errorf("%w: Statuses is required", ErrInvalidOptions))
	}
	if o.ResyncInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: ResyncInterval is negative (%v)", ErrInvalidOptions, o.ResyncInterval))
	}
	return errors.Join(errs...)
}

// Manager writes pod statuses to the apiserver. Enqueue and Synced are
// safe for concurrent use; Run runs once.
type Manager struct {
	opts  Options
	log   logr.Logger
	queue workqueue.TypedRateLimitingInterface[types.UID]

	mu      sync.Mutex
	written map[types.UID]writtenStatus
}

// writtenStatus is the last status written for a pod (by the UID the
// agent runs it under).
type writtenStatus struct {
	target types.UID // the UID of the object written to
	rv     string    // its resourceVersion after the write
	status corev1.PodStatus
	at     time.Time
}

// New returns a Manager; nothing is written before Run.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.ResyncInterval == 0 {
		opts.ResyncInterval = workqueuerun.DefaultResyncInterval
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	return &Manager{
		opts:    opts,
		log:     opts.Logger.WithName("status-manager"),
		queue:   workqueuerun.NewQueue[types.UID]("pod_status", opts.Clock),
		written: map[types.UID]writtenStatus{},
	}, nil
}

// Enqueue asks for the status of the pod the agent runs under uid to be
// written, if it changed. Calls that come while one is queued coalesce.
func (m *Manager) Enqueue(uid types.UID) { m.queue.Add(uid) }

// Run writes statuses with client until ctx ends.
func (m *Manager) Run(ctx context.Context, client corev1client.PodsGetter) error {
	workqueuerun.Run(ctx, workqueuerun.Loop[types.UID]{
		Queue: m.queue, Workers: workqueuerun.DefaultWorkers, Resync: m.Resync, ResyncInterval: m.opts.ResyncInterval, Clock: m.opts.Clock,
		Sync: func(ctx context.Context, uid types.UID) (time.Duration, error) {
			return 0, m.sync(ctx, client, uid)
		},
		Failed: func(uid types.UID, err error) {
			m.log.V(2).Info("Pod status not written; retrying", "podUID", uid, "err", err)
		},
	})
	return nil
}

// Resync queues every pod whose status the watch shows otherwise than the
// agent has it.
func (m *Manager) Resync() {
	for _, e := range m.opts.Statuses.List() {
		target, ok := m.target(e.Pod)
		if ok && !equal(&target.Status, merge(normalize(e.Status), &target.Status)) {
			m.queue.Add(e.Pod.UID)
		}
	}
}

// sync writes the pod's status to its target if it differs from what the
// target holds.
func (m *Manager) sync(ctx context.Context, client corev1client.PodsGetter, uid types.UID) error {
	e, ok := m.opts.Statuses.Get(uid)
	if !ok {
		m.forget(uid)
		return nil
	}
	target, ok := m.target(e.Pod)
	if !ok {
		return nil // a new mirror, or its removal, queues the pod again
	}
	want := merge(normalize(e.Status), &target.Status)
	base := m.base(uid, target)
	if equal(base, want) {
		m.told(uid, e.Generation)
		return m.deleteFinished(ctx, client, uid, target)
	}
	patch, err := uidpatch.TwoWay(&corev1.Pod{Status: *base}, &corev1.Pod{Status: *want}, target.UID)
	if err != nil {
		return err
	}
	start := m.opts.Clock.Now()
	patched, err := client.Pods(target.Namespace).Patch(ctx, target.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	m.opts.Metrics.observe(err, m.opts.Clock.Since(start))
	switch {
	case apierrors.IsNotFound(err):
		// The target is gone: its removal reaches the pod manager and
		// queues the pod again if there is a new one.
		return nil
	case err != nil:
		return fmt.Errorf("pod %s status: %w", podtypes.PodFullName(target), err)
	}
	m.mu.Lock()
	m.written[uid] = writtenStatus{target: target.UID, rv: patched.ResourceVersion, status: *want, at: m.opts.Clock.Now()}
	m.mu.Unlock()
	m.told(uid, e.Generation)
	return m.deleteFinished(ctx, client, uid, target)
}

// deleteFinished ends the graceful deletion of an API pod: once the agent
// has stopped it, removed its volumes and written its final status, the
// object goes, with grace 0 and a precondition on the UID that ran.
func (m *Manager) deleteFinished(ctx context.Context, client corev1client.PodsGetter, uid types.UID, target *corev1.Pod) error {
	if target.DeletionTimestamp == nil || podtypes.IsMirrorPod(target) || target.UID != uid ||
		m.opts.Finished == nil || !m.opts.Finished(uid) {
		return nil
	}
	grace := int64(0)
	err := client.Pods(target.Namespace).Delete(ctx, target.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &uid},
	})
	m.opts.Metrics.observeDelete(err)
	switch {
	case err == nil:
		m.log.V(2).Info("Deleted a pod that has finished terminating", "pod", podtypes.PodFullName(target), "podUID", uid)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil // gone already, or another pod of that name now
	}
	return fmt.Errorf("deleting pod %s: %w", podtypes.PodFullName(target), err)
}

// base is the status the target holds, as far as the manager knows: what
// it last wrote there, unless the watch has shown another version since
// (someone else wrote), or the status the watch shows.
func (m *Manager) base(uid types.UID, target *corev1.Pod) *corev1.PodStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.written[uid]
	if !ok || w.target != target.UID {
		return &target.Status
	}
	if target.ResourceVersion == w.rv || m.opts.Clock.Since(w.at) < defaultWatchLag {
		return &w.status
	}
	return &target.Status
}

// told tells Options.Written that the apiserver holds generation gen of
// the pod's status.
func (m *Manager) told(uid types.UID, gen uint64) {
	if m.opts.Written != nil {
		m.opts.Written(uid, gen)
	}
}

func (m *Manager) forget(uid types.UID) {
	m.mu.Lock()
	delete(m.written, uid)
	m.mu.Unlock()
}

// target is the API object that carries the status of pod: the mirror of
// this version of a static pod, or the API pod itself, as the pod manager
// holds it.
func (m *Manager) target(pod *corev1.Pod) (*corev1.Pod, bool) {
	if podtypes.IsMirrorPod(pod) {
		return nil, false
	}
	current, ok := m.opts.Pods.PodByUID(pod.UID)
	if !ok {
		return nil, false // no source wants it any more
	}
	if !podtypes.IsStaticPod(current) {
		return current, true
	}
	mirror, ok := m.opts.Pods.MirrorPodByPod(current)
	if !ok || !podmanager.IsCurrentMirrorOf(mirror, current) {
		return nil, false
	}
	return mirror, true
}

// Synced reports the UID of the object that carries the pod's status, and
// whether it holds the agent's newest status.
func (m *Manager) Synced(uid types.UID) (types.UID, bool) {
	e, ok := m.opts.Statuses.Get(uid)
	if !ok {
		return "", false
	}
	target, ok := m.target(e.Pod)
	if !ok {
		return "", false
	}
	return target.UID, equal(m.base(uid, target), merge(normalize(e.Status), &target.Status))
}

func equal(a, b *corev1.PodStatus) bool { return equality.Semantic.DeepEqual(a, b) }
