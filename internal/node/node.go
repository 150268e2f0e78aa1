package node

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"
)

// Node keeps the agent's Node object and Lease current.
type Node struct {
	opts  Options
	log   logr.Logger
	clock clock.WithTicker
	// client is the node's own, given to Run before anything is sent.
	client kubernetes.Interface

	// kick wakes the status loop when the watch shows the Node changed
	// under the agent (deleted, recreated, marked by a controller).
	kick chan struct{}

	mu sync.Mutex
	// current is the newest Node the apiserver returned or sent; nil
	// until registered, and again once it is seen deleted.
	current *corev1.Node
	// lastWrite is when the status was last written; heartbeatDue says
	// the apiserver was away (the watch listed the Node again, or it
	// answered again after it failed): the status is written at once, so
	// that a reader sees a fresh heartbeat soon after the apiserver comes
	// back.
	lastWrite    time.Time
	heartbeatDue bool
	// readyOnce is set once the Node has been written Ready: until then
	// the status is checked every fastCheck and written as soon as it
	// changes, so that a starting node is Ready in moments, not after a
	// whole update period.
	readyOnce bool
	// ownUID is the UID of the Node this agent registered or adopted: a
	// Node the watch shows first, or one made again by someone else, is
	// adopted (its labels brought up to date) before its status is
	// written.
	ownUID types.UID
	// goneUID is the UID of the Node last seen deleted: a write that was
	// in flight when it went must not bring it back as current.
	goneUID types.UID
	// stopLease ends the lease controller's current run, which runLease
	// then starts over.
	stopLease context.CancelFunc

	// reach is whether the apiserver answered the Node's last request;
	// leaseFailing whether it answered the lease controller's last one.
	reach        reach
	leaseFailing atomic.Bool
}

// New checks the options; nothing is sent to the apiserver before Run.
func New(opts Options) (*Node, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	return &Node{
		opts:  opts,
		log:   opts.Logger.WithName("node").WithValues("node", opts.Name),
		clock: opts.Clock,
		kick:  make(chan struct{}, 1),
		reach: reach{wentAway: make(chan struct{}, 1)},
	}, nil
}

// Run registers the Node with client, then keeps its status and Lease
// current until ctx ends. An apiserver that cannot be reached is retried
// with backoff; it never ends Run. It may be called once.
func (n *Node) Run(ctx context.Context, client kubernetes.Interface) error {
	n.client = client
	var wg sync.WaitGroup
	defer wg.Wait()
	reflector := n.watchNode()
	wg.Add(2)
	go func() { defer wg.Done(); reflector.RunWithContext(ctx) }()
	go func() { defer wg.Done(); n.probeWhileAway(ctx) }()
	leaseStarted := false

	ticker := n.clock.NewTicker(n.opts.StatusUpdateFrequency)
	defer ticker.Stop()
	newBackoff := func() wait.Backoff {
		return wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: math.MaxInt32, Cap: n.opts.StatusUpdateFrequency}
	}
	backoff := newBackoff()
	for {
		next := ticker.C()
		if !n.wasReady() {
			next = n.clock.After(fastCheck)
		}
		// A write that hangs (on a connection to an apiserver that went
		// away without closing it) must not hold the next one back: each
		// sync gets one update period, as the kubelet's heartbeat client.
		sctx, cancel := context.WithTimeout(ctx, n.opts.StatusUpdateFrequency)
		err := n.sync(sctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			n.log.Error(err, "Updating the Node failed; retrying")
			next = n.clock.After(backoff.Step())
		} else {
			backoff = newBackoff()
		}
		// The Lease is owned by the Node: it starts once there is one.
		if !leaseStarted && n.registered() {
			leaseStarted = true
			wg.Add(1)
			go func() { defer wg.Done(); n.runLease(ctx) }()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-next:
		case <-n.kick:
		}
	}
}

// observed takes a Node the watch sent, unless it is older than the one
// a patch already returned.
func (n *Node) observed(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok || node.Name != n.opts.Name {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.current != nil && node.UID == n.current.UID && olderThan(node.ResourceVersion, n.current.ResourceVersion) {
		return
	}
	changed := n.current == nil || node.UID != n.current.UID ||
		!conditionsEqual(node.Status.Conditions, n.current.Status.Conditions)
	n.current = node
	if changed {
		n.wake()
	}
}

func (n *Node) deleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	node, ok := obj.(*corev1.Node)
	if !ok || node.Name != n.opts.Name {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.current != nil && n.current.UID == node.UID {
		n.log.Info("The Node was deleted; registering it again")
		n.current, n.goneUID = nil, node.UID
		n.wake()
	}
}

// fastCheck is the status period of a node not yet Ready.
const fastCheck = 200 * time.Millisecond

func (n *Node) wasReady() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.readyOnce
}

func (n *Node) noteReady(written *corev1.Node) {
	for _, c := range written.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			n.mu.Lock()
			n.readyOnce = true
			n.mu.Unlock()
		}
	}
}

// ErrNotRegistered is returned by Current before the Node is registered,
// or while it is registered again after it was deleted.
var ErrNotRegistered = errors.New("the Node is not registered yet")

// Current returns the newest Node object the agent wrote or saw, as the
// mirror pods' owner needs it. It must be treated as read-only.
func (n *Node) Current(context.Context) (*corev1.Node, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.current == nil {
		return nil, ErrNotRegistered
	}
	return n.current, nil
}

func (n *Node) registered() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.current != nil
}

// gone is a relist, at resourceVersion rv, that found no Node: whatever
// the agent had is gone, unless it registered after that list.
func (n *Node) gone(rv string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.current != nil && !olderThan(rv, n.current.ResourceVersion) {
		n.log.Info("The Node is gone; registering it again")
		n.current, n.goneUID = nil, n.current.UID
		n.wake()
	}
}

// apiserverWasAway notes a list of the Node by the watch, or an apiserver
// that answers again (see reach.go): it wakes the status loop to write a
// heartbeat, starts a failing Lease renewal over, and tells
// OnAPIServerBack.
func (n *Node) apiserverWasAway() {
	n.mu.Lock()
	n.heartbeatDue = true
	n.wake()
	n.mu.Unlock()
	n.restartLease()
	if n.opts.OnAPIServerBack != nil {
		n.opts.OnAPIServerBack()
	}
}

func (n *Node) wake() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// olderThan compares resource versions as the numbers the apiserver makes
// them; one that is not a number is never older.
func olderThan(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

func conditionsEqual(a, b []corev1.NodeCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason {
			return false
		}
	}
	return true
}

// leaseController renews the Lease with client-go's lease controller,
// which keeps the last Lease it wrote and updates it without a GET, and
// calls OnRepeatedHeartbeatFailure when renewals keep failing. The
// Lease is owned by the Node, so that it goes with it; it is not created
// before the Node is registered.
func (n *Node) leaseController() lease.Controller {
	renew := time.Duration(n.opts.LeaseDuration) * time.Second / 4
	return lease.NewController(n.clock, leaseClient{Interface: n.client, n: n}, n.opts.Name, n.opts.LeaseDuration, n.opts.OnRepeatedHeartbeatFailure, renew,
		n.opts.Name, corev1.NamespaceNodeLease, n.setLeaseOwner)
}

func (n *Node) setLeaseOwner(l *coordinationv1.Lease) error {
	n.mu.Lock()
	cur := n.current
	n.mu.Unlock()
	if cur == nil {
		return errors.New("the Node is not registered yet")
	}
	for _, ref := range l.GetOwnerReferences() {
		if ref.UID == cur.UID {
			return nil
		}
	}
	l.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: cur.Name, UID: cur.UID}})
	return nil
}

// sync registers the Node if it is not, and writes its status if it
// changed or is due.
func (n *Node) sync(ctx context.Context) error {
	n.mu.Lock()
	cur, own := n.current, n.ownUID
	n.mu.Unlock()
	if cur == nil || cur.UID != own {
		registered, err := n.register(ctx)
		if err != nil {
			return err
		}
		n.setCurrent(registered)
		n.noteReady(registered)
		n.mu.Lock()
		n.ownUID = registered.UID
		n.mu.Unlock()
		cur = registered
	}
	want, err := n.desiredStatus(ctx, cur)
	if err != nil {
		return err
	}
	now := n.clock.Now()
	n.mu.Lock()
	lastWrite, heartbeatDue := n.lastWrite, n.heartbeatDue
	n.mu.Unlock()
	due := heartbeatDue || now.Sub(lastWrite) >= n.opts.StatusReportFrequency
	if !due && statusEqual(cur.Status, want) {
		return nil
	}
	if n.wasReady() && now.Sub(lastWrite) < n.opts.StatusUpdateFrequency-n.opts.StatusUpdateFrequency/10 {
		return nil // written moments ago: the next tick writes this change
	}
	patched, err := n.patchStatus(ctx, cur, want, now)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Deleted, or deleted and made again by someone: start over.
		n.log.Info("The Node changed identity under the agent; registering it again", "err", err.Error())
		n.mu.Lock()
		n.current = nil
		n.mu.Unlock()
		return err
	case err != nil:
		return err
	}
	n.markWritten(now)
	n.setCurrent(patched)
	n.noteReady(patched)
	return nil
}

func (n *Node) setCurrent(node *corev1.Node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if node.UID == n.goneUID {
		return
	}
	if n.current == nil || n.current.UID != node.UID || !olderThan(node.ResourceVersion, n.current.ResourceVersion) {
		n.current = node
	}
}
