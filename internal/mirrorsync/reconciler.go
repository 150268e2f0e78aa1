package mirrorsync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/workqueuerun"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The defaults of Options.
const (
	// A created mirror the watch has not shown after this long is taken
	// for lost, and created again.
	DefaultCreateExpiry = 5 * time.Second
	// mirrorsUnseenRetry is how soon a create held back until the
	// apiserver's mirrors are known is looked at again.
	mirrorsUnseenRetry = 250 * time.Millisecond
	// undeletedRetry is how soon a name whose delete deleted nothing is
	// looked at again.
	undeletedRetry = 500 * time.Millisecond
)

// EventReasonNotMirrorable is the reason of the Node event that says a
// static pod runs without a mirror pod.
const EventReasonNotMirrorable = "MirrorPodRefused"

// Client is what the reconciler asks of the apiserver; *mirror.Client
// satisfies it.
type Client interface {
	Create(ctx context.Context, static *corev1.Pod) (*corev1.Pod, error)
	Delete(ctx context.Context, fullName string, uid *types.UID) (bool, error)
}

// Recorder records events; client-go's record.EventRecorder satisfies it.
type Recorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// Options configure a Reconciler. Pods and SourcesReady are required.
type Options struct {
	Pods *podmanager.Manager
	// SourcesReady reports whether every pod source, the apiserver's
	// included, has sent its pods: before that, a mirror without a static
	// pod may only mean the static pod has not been read yet.
	SourcesReady func() bool
	// MirrorsSeen reports whether the apiserver source has sent its pods:
	// before that, a static pod without a mirror may have one the agent
	// has not seen yet, and is not given one (which would be a create, a
	// conflict and a read). Nil means always.
	MirrorsSeen func() bool
	// NodeName names the Node that events about refused mirrors go to.
	NodeName string
	Recorder Recorder
	// ResyncInterval is how often every name is looked at again.
	ResyncInterval time.Duration
	// CreateExpiry is how long a created mirror is waited for in the watch.
	CreateExpiry time.Duration
	Logger       logr.Logger
	Clock        clock.WithTicker
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid mirror sync options")

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field; a zero duration means the
// default.
func (o Options) validate() error {
	var errs []error
	if o.Pods == nil {
		errs = append(errs, fmt.Errorf("%w: Pods is required", ErrInvalidOptions))
	}
	if o.SourcesReady == nil {
		errs = append(errs, fmt.Errorf("%w: SourcesReady is required", ErrInvalidOptions))
	}
	for name, d := range map[string]time.Duration{"ResyncInterval": o.ResyncInterval, "CreateExpiry": o.CreateExpiry} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%w: %s is negative (%v)", ErrInvalidOptions, name, d))
		}
	}
	return errors.Join(errs...)
}

// Reconciler keeps the mirror pods of the node's static pods. Enqueue and
// Mirror are safe for concurrent use; Run runs once.
type Reconciler struct {
	opts  Options
	log   logr.Logger
	queue workqueue.TypedRateLimitingInterface[string]

	mu    sync.Mutex
	names map[string]*nameState
}

// nameState is what the reconciler remembers of one full name.
type nameState struct {
	// created is the mirror this reconciler created and the watch has not
	// shown yet.
	created *createdMirror
	// refused says why the static pod cannot be mirrored; refusedHash is
	// the version it was said for (it is said once per version).
	refused     string
	refusedHash string
	// failure is the last error, until a reconcile succeeds.
	failure string
}

type createdMirror struct {
	uid  types.UID
	hash string
	at   time.Time
}

// New returns a Reconciler; nothing runs before Run.
func New(opts Options) (*Reconciler, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.ResyncInterval == 0 {
		opts.ResyncInterval = workqueuerun.DefaultResyncInterval
	}
	if opts.MirrorsSeen == nil {
		opts.MirrorsSeen = func() bool { return true }
	}
	if opts.CreateExpiry == 0 {
		opts.CreateExpiry = DefaultCreateExpiry
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Reconciler{
		opts:  opts,
		log:   opts.Logger.WithName("mirror-pods"),
		queue: workqueuerun.NewQueue[string]("mirror_pods", opts.Clock),
		names: map[string]*nameState{},
	}, nil
}

// Enqueue asks for the mirror of fullName to be looked at.
func (r *Reconciler) Enqueue(fullName string) { r.queue.Add(fullName) }

// MirrorGone tells the reconciler that the mirror pod uid of fullName is
// gone from the apiserver: if it was one it created and had not seen yet,
// it is not waited for any more.
func (r *Reconciler) MirrorGone(fullName string, uid types.UID) {
	r.mu.Lock()
	if st, ok := r.names[fullName]; ok && st.created != nil && st.created.uid == uid {
		st.created = nil
	}
	r.mu.Unlock()
	r.queue.Add(fullName)
}

// Run reconciles with client until ctx ends.
func (r *Reconciler) Run(ctx context.Context, client Client) error {
	workqueuerun.Run(ctx, workqueuerun.Loop[string]{
		Queue: r.queue, Workers: workqueuerun.DefaultWorkers, Resync: r.EnqueueAll, ResyncInterval: r.opts.ResyncInterval, Clock: r.opts.Clock,
		Sync: func(ctx context.Context, name string) (time.Duration, error) {
			again, err := r.reconcile(ctx, client, name)
			r.noteFailure(name, err)
			return again, err
		},
		Failed: func(name string, err error) {
			r.log.V(2).Info("Mirror pod not reconciled; retrying", "pod", name, "err", err)
		},
	})
	return nil
}

// EnqueueAll asks for every static pod and every mirror pod to be looked at.
func (r *Reconciler) EnqueueAll() {
	pods, mirrors := r.opts.Pods.PodsAndMirrorPods()
	for _, p := range pods {
		if podtypes.IsStaticPod(p) {
			r.queue.Add(podtypes.PodFullName(p))
		}
	}
	for _, m := range mirrors {
		r.queue.Add(podtypes.PodFullName(m))
	}
}

// reconcile makes the apiserver hold what it should under name. A positive
// duration asks to look again after it, without counting as a failure.
func (r *Reconciler) reconcile(ctx context.Context, client Client, name string) (time.Duration, error) {
	static, hasStatic := r.opts.Pods.PodByFullName(name)
	if hasStatic && !podtypes.IsStaticPod(static) {
		return 0, nil // a pod from the apiserver holds the name: not ours to mirror
	}
	existing, hasMirror := r.opts.Pods.MirrorPodByFullName(name)

	if !hasStatic {
		r.forgetCreated(name)
		if !hasMirror {
			r.drop(name)
			return 0, nil
		}
		if !r.opts.SourcesReady() {
			return 0, nil // the next resync looks again
		}
		return r.delete(ctx, client, existing, "its static pod is gone")
	}

	hash := podtypes.ConfigHash(static)
	if err := mirror.CheckMirrorable(static); err != nil {
		r.refuse(name, hash, err)
		if hasMirror {
			return r.delete(ctx, client, existing, "its static pod cannot be mirrored any more")
		}
		return 0, nil
	}
	r.clearRefusal(name)

	if hasMirror {
		if podmanager.IsCurrentMirrorOf(existing, static) {
			r.forgetCreated(name)
			return 0, nil
		}
		why := "it mirrors another version of the static pod"
		if existing.DeletionTimestamp != nil {
			why = "it is being deleted"
		}
		if again, err := r.delete(ctx, client, existing, why); err != nil || again > 0 {
			return again, err
		}
		// Deleted at once (grace 0): create the new one now, not after
		// the watch has shown the deletion.
	} else if wait := r.awaitingCreated(name, hash); wait > 0 {
		return wait, nil
	} else if !r.opts.MirrorsSeen() {
		return mirrorsUnseenRetry, nil
	}

	created, err := client.Create(ctx, static)
	if err != nil {
		return 0, err
	}
	r.noteCreated(name, created.UID, hash)
	r.log.V(2).Info("Created mirror pod", "pod", name, "mirrorUID", created.UID, "hash", hash)
	return 0, nil
}

// delete deletes the mirror m by its UID. A delete that deleted nothing
// (the pod was gone, or held another UID, or the apiserver, just back,
// answered a conflict) proves nothing about what the apiserver holds: the
// name is looked at again once the watch may have caught up, rather than
// taken for done.
func (r *Reconciler) delete(ctx context.Context, client Client, m *corev1.Pod, why string) (time.Duration, error) {
	uid := m.UID
	deleted, err := client.Delete(ctx, podtypes.PodFullName(m), &uid)
	if err != nil {
		return 0, err
	}
	if !deleted {
		return undeletedRetry, nil
	}
	r.log.Info("Deleted mirror pod", "pod", podtypes.PodFullName(m), "mirrorUID", uid, "reason", why)
	return 0, nil
}

func (r *Reconciler) state(name string) *nameState {
	st, ok := r.names[name]
	if !ok {
		st = &nameState{}
		r.names[name] = st
	}
	return st
}

func (r *Reconciler) drop(name string) {
	r.mu.Lock()
	delete(r.names, name)
	r.mu.Unlock()
}

func (r *Reconciler) noteCreated(name string, uid types.UID, hash string) {
	r.mu.Lock()
	r.state(name).created = &createdMirror{uid: uid, hash: hash, at: r.opts.Clock.Now()}
	r.mu.Unlock()
}

func (r *Reconciler) forgetCreated(name string) {
	r.mu.Lock()
	if st, ok := r.names[name]; ok {
		st.created = nil
	}
	r.mu.Unlock()
}

// awaitingCreated returns how much longer to wait for a mirror of hash
// this reconciler created to show in the watch; 0 means create one.
func (r *Reconciler) awaitingCreated(name, hash string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.names[name]
	if !ok || st.created == nil || st.created.hash != hash {
		return 0
	}
	left := r.opts.CreateExpiry - r.opts.Clock.Since(st.created.at)
	if left <= 0 {
		st.created = nil
		return 0
	}
	return left
}

// refuse records why the static pod cannot be mirrored and says it once
// per version of the pod: in the log and as an event on the Node.
func (r *Reconciler) refuse(name, hash string, why error) {
	r.mu.Lock()
	st := r.state(name)
	first := st.refusedHash != hash
	st.refused, st.refusedHash, st.created = why.Error(), hash, nil
	r.mu.Unlock()
	if !first {
		return
	}
	r.log.Info("Static pod runs without a mirror pod", "pod", name, "reason", why.Error())
	if r.opts.Recorder != nil && r.opts.NodeName != "" {
		ref := &corev1.ObjectReference{Kind: "Node", Name: r.opts.NodeName, UID: types.UID(r.opts.NodeName)}
		r.opts.Recorder.Eventf(ref, corev1.EventTypeWarning, EventReasonNotMirrorable,
			"Static pod %s runs, but has no mirror pod: %v", name, why)
	}
}

func (r *Reconciler) clearRefusal(name string) {
	r.mu.Lock()
	if st, ok := r.names[name]; ok {
		st.refused, st.refusedHash = "", ""
	}
	r.mu.Unlock()
}

func (r *Reconciler) noteFailure(name string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.names[name]
	switch {
	case err != nil:
		r.state(name).failure = err.Error()
	case ok:
		st.failure = ""
	}
}

// State is what the local API shows of a static pod's mirror.
type State struct {
	// UID is the mirror pod's UID, or "" when there is none.
	UID types.UID
	// Synced: the mirror exists and mirrors this version of the pod.
	Synced bool
	// Problem says why there is no current mirror, when something is in
	// the way: the pod cannot be mirrored, or the last attempt failed.
	Problem string
	// NotMirrorable: NodeRestriction would refuse a mirror of the pod.
	NotMirrorable bool
}

// Mirror returns the state of the mirror of a static pod.
func (r *Reconciler) Mirror(static *corev1.Pod) State {
	var s State
	if m, ok := r.opts.Pods.MirrorPodByPod(static); ok {
		s.UID = m.UID
		s.Synced = podmanager.IsCurrentMirrorOf(m, static)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.names[podtypes.PodFullName(static)]; ok {
		switch {
		case st.refused != "" && st.refusedHash == podtypes.ConfigHash(static):
			s.Problem, s.NotMirrorable = st.refused, true
		case !s.Synced && st.failure != "":
			s.Problem = fmt.Sprintf("last attempt failed: %s", st.failure)
		}
	}
	return s
}
