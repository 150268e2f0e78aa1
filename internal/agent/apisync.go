package agent

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodeagent/nodeagent/internal/mirrorsync"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/statusmanager"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// apiSync is what keeps the apiserver telling the agent's story, in
// connected mode: the mirror pods of the static pods, and the pod
// statuses. The sync loop tells it what changed; a nil *apiSync (the
// standalone agent) is told nothing.
type apiSync struct {
	pods     *podmanager.Manager
	mirrors  *mirrorsync.Reconciler
	statuses *statusmanager.Manager

	mu sync.Mutex
	// finished holds the API pods of which nothing runs any more and whose
	// volumes are gone: once deleted, they may go from the apiserver.
	finished map[types.UID]bool
}

// podChanged: a pod was added or changed, or its deletion requested.
func (s *apiSync) podChanged(pod *corev1.Pod) {
	if s == nil {
		return
	}
	switch {
	case podtypes.IsMirrorPod(pod):
		s.mirrors.Enqueue(podtypes.PodFullName(pod))
		s.mirrorMoved(pod)
	case podtypes.IsStaticPod(pod):
		s.mirrors.Enqueue(podtypes.PodFullName(pod))
	case pod.DeletionTimestamp != nil:
		// Its deletion may be ended now, if it has finished already.
		s.statuses.Enqueue(pod.UID)
	}
}

// podFinished: nothing of the pod runs any more and its volumes are gone.
func (s *apiSync) podFinished(pod *corev1.Pod) {
	if s == nil || podtypes.IsStaticPod(pod) {
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

func (s *apiSync) isFinished(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished[uid]
}

// podRemoved: a source no longer has the pod.
func (s *apiSync) podRemoved(pod *corev1.Pod) {
	if s == nil {
		return
	}
	switch {
	case podtypes.IsMirrorPod(pod):
		s.mirrors.MirrorGone(podtypes.PodFullName(pod), pod.UID)
		s.mirrorMoved(pod)
	case podtypes.IsStaticPod(pod):
		s.mirrors.Enqueue(podtypes.PodFullName(pod))
	default:
		s.mu.Lock()
		delete(s.finished, pod.UID)
		s.mu.Unlock()
	}
}

// mirrorMoved queues the status of the static pod whose mirror appeared,
// changed or went: its status goes to the new mirror.
func (s *apiSync) mirrorMoved(m *corev1.Pod) {
	if static, ok := s.pods.PodByMirrorPod(m); ok {
		s.statuses.Enqueue(static.UID)
	}
}

// statusChanged: the status store holds a new status for uid.
func (s *apiSync) statusChanged(uid types.UID) {
	if s != nil {
		s.statuses.Enqueue(uid)
	}
}

func newAPISync(opts Options, pods *podmanager.Manager, statuses *status.Store) (*apiSync, error) {
	mirrors, err := mirrorsync.New(mirrorsync.Options{
		Pods: pods, SourcesReady: opts.SourcesReady, MirrorsSeen: opts.MirrorsSeen, NodeName: opts.NodeName, Recorder: opts.Recorder,
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
	s := &apiSync{pods: pods, mirrors: mirrors, finished: map[types.UID]bool{}}
	s.statuses, err = statusmanager.New(statusmanager.Options{
		Pods: pods, Statuses: statuses, Finished: s.isFinished, Metrics: sm, Logger: opts.Logger, Clock: opts.Clock,
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Connection is what the agent needs to keep the apiserver current.
type Connection struct {
	// Client acts as the node's identity.
	Client kubernetes.Interface
	// Node returns this node's Node object (for its UID, the mirror pods'
	// owner).
	Node mirror.NodeGetter
}

// RunConnected keeps the mirror pods and the pod statuses in the apiserver
// current until ctx ends. It needs an agent built with Options.Connected,
// and runs once the Node exists.
func (a *Agent) RunConnected(ctx context.Context, conn Connection) error {
	if a.api == nil {
		return fmt.Errorf("%w: the agent was not built for connected mode", ErrInvalidOptions)
	}
	mc, err := mirror.New(mirror.Options{Client: conn.Client, NodeName: a.nodeName, Nodes: conn.Node})
	if err != nil {
		return err
	}
	a.loop.apiAdmission.node.Store(&conn.Node)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.api.mirrors.Run(gctx, mc) })
	g.Go(func() error { return a.api.statuses.Run(gctx, conn.Client.CoreV1()) })
	return g.Wait()
}
