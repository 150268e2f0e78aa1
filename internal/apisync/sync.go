package apisync

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/mirrorsync"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/statusmanager"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Sync is what keeps the apiserver telling the agent's story, in
// connected mode: the mirror pods of the static pods, and the pod
// statuses. The agent's sync loop tells it what changed; a nil *Sync (the
// standalone agent) is told nothing.
type Sync struct {
	pods     *podmanager.Manager
	mirrors  *mirrorsync.Reconciler
	statuses *statusmanager.Manager
	nodeName string

	mu sync.Mutex
	// finished holds the API pods of which nothing runs any more and whose
	// volumes are gone: once deleted, they may go from the apiserver.
	finished map[types.UID]bool
}

// Options configure a Sync. Pods, Statuses and SourcesReady are required.
type Options struct {
	NodeName string
	// Pods are the agent's indexes of pods and mirror pods; Statuses its
	// store of the pods' statuses.
	Pods     *podmanager.Manager
	Statuses *status.Store
	// SourcesReady reports whether every source has delivered its pods;
	// MirrorsSeen whether the apiserver source has sent its pods (the
	// mirror pods) once.
	SourcesReady func() bool
	MirrorsSeen  func() bool
	// Recorder, if not nil, receives the Node's events about static pods
	// that cannot be mirrored.
	Recorder record.EventRecorder
	// StatusWritten, if not nil, is told that the apiserver holds the
	// pod's status as of the status store's generation gen.
	StatusWritten func(uid types.UID, gen uint64)
	// Registry receives the metrics of the status manager; nil registers
	// none.
	Registry metrics.KubeRegistry
	Logger   logr.Logger
	Clock    clock.WithTicker
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid API sync options")

// validate reports every missing option at once, each wrapping
// ErrInvalidOptions and naming the field.
func (o Options) validate() error {
	var errs []error
	for _, f := range []struct {
		name    string
		missing bool
	}{{"Pods", o.Pods == nil}, {"Statuses", o.Statuses == nil}, {"SourcesReady", o.SourcesReady == nil}} {
		if f.missing {
			errs = append(errs, fmt.Errorf("%w: %s is required", ErrInvalidOptions, f.name))
		}
	}
	return errors.Join(errs...)
}

// New builds a Sync; Run runs it once the Node exists.
func New(opts Options) (*Sync, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	mirrors, err := mirrorsync.New(mirrorsync.Options{
		Pods: opts.Pods, SourcesReady: opts.SourcesReady, MirrorsSeen: opts.MirrorsSeen, NodeName: opts.NodeName, Recorder: opts.Recorder,
		Logger: opts.Logger, Clock: opts.Clock,
	})
	if err != nil {
		return nil, err
	}
	sm := statusmanager.NewMetrics()
	if opts.Registry != nil {
		if err := sm.Register(opts.Registry); err != nil {
			return nil, fmt.Errorf("status manager metrics: %w", err)
		}
	}
	s := &Sync{pods: opts.Pods, mirrors: mirrors, nodeName: opts.NodeName, finished: map[types.UID]bool{}}
	s.statuses, err = statusmanager.New(statusmanager.Options{
		Pods: opts.Pods, Statuses: opts.Statuses, Finished: s.isFinished, Written: opts.StatusWritten, Metrics: sm, Logger: opts.Logger, Clock: opts.Clock,
	})
	if err != nil {
		return nil, err
	}
	// Each new status is written.
	opts.Statuses.OnChange(s.statuses.Enqueue)
	return s, nil
}

// StaticPodChanged: a static pod was added or changed, or its deletion
// asked: its mirror follows.
func (s *Sync) StaticPodChanged(pod *corev1.Pod) {
	if s != nil {
		s.mirrors.Enqueue(podtypes.PodFullName(pod))
	}
}

// StaticPodRemoved: a source no longer has the static pod: its mirror goes.
func (s *Sync) StaticPodRemoved(pod *corev1.Pod) { s.StaticPodChanged(pod) }

// MirrorPodChanged: the apiserver source sent a mirror pod, new or
// changed: the reconciler checks it, and its static pod's status goes to it.
func (s *Sync) MirrorPodChanged(pod *corev1.Pod) {
	if s == nil {
		return
	}
	s.mirrors.Enqueue(podtypes.PodFullName(pod))
	s.mirrorMoved(pod)
}

// MirrorPodRemoved: the mirror pod is gone from the apiserver.
func (s *Sync) MirrorPodRemoved(pod *corev1.Pod) {
	if s == nil {
		return
	}
	s.mirrors.MirrorGone(podtypes.PodFullName(pod), pod.UID)
	s.mirrorMoved(pod)
}

// APIPodChanged: an API pod was added or changed, or its deletion asked:
// its deletion may be ended now, if it has finished already.
func (s *Sync) APIPodChanged(pod *corev1.Pod) {
	if s != nil && pod.DeletionTimestamp != nil {
		s.statuses.Enqueue(pod.UID)
	}
}

// APIPodFinished: nothing of the API pod runs any more and its volumes
// are gone.
func (s *Sync) APIPodFinished(pod *corev1.Pod) {
	if s == nil {
		return
	}
	if _, ok := s.pods.PodByUID(pod.UID); !ok {
		return // gone from the apiserver already (force-deleted)
	}
	s.mu.Lock()
	s.finished[pod.UID] = true
	s.mu.Unlock()
	s.statuses.Enqueue(pod.UID)
}

func (s *Sync) isFinished(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished[uid]
}

// APIPodRemoved: the API pod is gone from the apiserver.
func (s *Sync) APIPodRemoved(pod *corev1.Pod) {
	if s == nil {
		return
	}
	s.mu.Lock()
	delete(s.finished, pod.UID)
	s.mu.Unlock()
}

// mirrorMoved queues the status of the static pod whose mirror appeared,
// changed or went: its status goes to the new mirror.
func (s *Sync) mirrorMoved(m *corev1.Pod) {
	if static, ok := s.pods.PodByMirrorPod(m); ok {
		s.statuses.Enqueue(static.UID)
	}
}

// Retry tries every mirror pod and status that is not current now, rather
// than at its next retry (up to 2 s away): the apiserver answers again
// after an outage.
func (s *Sync) Retry() {
	if s != nil {
		s.mirrors.EnqueueAll()
		s.statuses.Resync()
	}
}

// Mirror is the state of a static pod's mirror pod.
type Mirror struct {
	// UID is the mirror pod's, or "" while there is none.
	UID types.UID
	// Synced: the mirror exists and mirrors this version of the pod.
	// StatusSynced: it holds the pod's newest status.
	Synced       bool
	StatusSynced bool
	// Problem says what keeps the mirror from being current: the pod
	// cannot be mirrored (NotMirrorable, and why), or the last attempt
	// failed.
	Problem       string
	NotMirrorable bool
}

// Mirror returns the state of the mirror of a static pod, or nil for
// another pod or a nil Sync.
func (s *Sync) Mirror(pod *corev1.Pod) *Mirror {
	if s == nil || !podtypes.IsStaticPod(pod) {
		return nil
	}
	m := s.mirrors.Mirror(pod)
	_, statusSynced := s.statuses.Synced(pod.UID)
	return &Mirror{UID: m.UID, Synced: m.Synced, StatusSynced: m.Synced && statusSynced, Problem: m.Problem, NotMirrorable: m.NotMirrorable}
}

// Connection is what the agent needs to keep the apiserver current.
type Connection struct {
	// Client acts as the node's identity.
	Client kubernetes.Interface
	// Node returns this node's Node object (for its UID, the mirror pods'
	// owner).
	Node mirror.NodeGetter
}

// RunMirrors keeps the mirror pods in the apiserver current until ctx
// ends; RunStatuses the pod statuses. Both run once connected, each a
// part of its own.
func (s *Sync) RunMirrors(ctx context.Context, conn Connection) error {
	mc, err := mirror.New(mirror.Options{Client: conn.Client, NodeName: s.nodeName, Nodes: conn.Node})
	if err != nil {
		return err
	}
	return s.mirrors.Run(ctx, mc)
}

// RunStatuses: see RunMirrors.
func (s *Sync) RunStatuses(ctx context.Context, conn Connection) error {
	return s.statuses.Run(ctx, conn.Client.CoreV1())
}
