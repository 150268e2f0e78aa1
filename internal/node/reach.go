package node

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Knowing at once when the apiserver is back. Each part that waits on the
// apiserver retries with a back-off of its own (the Node watch, the status
// loop, client-go's lease controller up to 7 s, the pod source), so the
// first to get an answer after an outage may come seconds after the
// apiserver is ready again. The Node notes how its requests go (the
// watch's, the Lease's); once one fails it asks /readyz (Options.Readyz)
// every probePeriod until the apiserver is ready, and the first answer after a failure,
// whichever request got it, ends every wait: the status is written, a
// failing Lease renewal starts over, and Options.OnAPIServerBack tells the
// rest of the agent.

// probePeriod is how often /readyz is asked while the apiserver is away: a
// refused connection costs next to nothing.
const probePeriod = 250 * time.Millisecond

// reach is whether the apiserver answered the last request the Node made.
type reach struct {
	away atomic.Bool
	// wentAway wakes the probe when a request fails.
	wentAway chan struct{}
}

// answered notes how a request went; it returns true for the first answer
// after a failure.
func (r *reach) answered(err error) (back bool) {
	if !isAnswer(err) {
		if !r.away.Swap(true) {
			select {
			case r.wentAway <- struct{}{}:
			default:
			}
		}
		return false
	}
	return r.away.Swap(false)
}

// isAnswer tells an answer of the apiserver (a success, or a refusal that
// is about the request, such as NotFound or Conflict) from a failure to
// reach it, or a ready one (no connection, a timeout, 429, 5xx).
func isAnswer(err error) bool {
	var status apierrors.APIStatus
	if err == nil {
		return true
	}
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code != 0 && code < http.StatusInternalServerError && code != http.StatusTooManyRequests
}

// noteAnswer takes how a request went; the first answer after a failure
// ends every wait.
func (n *Node) noteAnswer(err error) {
	if n.reach.answered(err) {
		n.apiserverWasAway()
	}
}

// probeWhileAway asks Options.Readyz every probePeriod while the last
// request failed, until ctx ends.
func (n *Node) probeWhileAway(ctx context.Context) {
	if n.opts.Readyz == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.reach.wentAway:
		}
		for n.reach.away.Load() {
			select {
			case <-ctx.Done():
				return
			case <-n.clock.After(probePeriod):
			}
			pctx, cancel := context.WithTimeout(ctx, probePeriod)
			ok := n.opts.Readyz(pctx)
			cancel()
			if ok {
				n.noteAnswer(nil)
			}
		}
	}
}

// runLease runs the lease controller until ctx ends, and starts it over
// when restartLease asks: a renewal that failed during an outage waits
// out a back-off of up to 7 s in the controller, which only the end of
// its context cuts short.
func (n *Node) runLease(ctx context.Context) {
	ctl := n.leaseController()
	for ctx.Err() == nil {
		lctx, cancel := context.WithCancel(ctx)
		n.mu.Lock()
		n.stopLease = cancel
		n.mu.Unlock()
		ctl.Run(lctx)
		cancel()
	}
}

// restartLease starts the lease controller over if its last request
// failed; one that renews fine is left alone, so that no renewal in flight
// is cut.
func (n *Node) restartLease() {
	if !n.leaseFailing.Load() {
		return
	}
	n.mu.Lock()
	stop := n.stopLease
	n.mu.Unlock()
	if stop != nil {
		n.log.V(2).Info("The apiserver is back; renewing the Lease now")
		stop()
	}
}

// leaseClient is the node's client as the lease controller sees it: each
// Lease request it makes tells the Node how it went.
type leaseClient struct {
	kubernetes.Interface
	n *Node
}

func (c leaseClient) CoordinationV1() coordinationv1client.CoordinationV1Interface {
	return leaseGroup{CoordinationV1Interface: c.Interface.CoordinationV1(), n: c.n}
}

type leaseGroup struct {
	coordinationv1client.CoordinationV1Interface
	n *Node
}

func (g leaseGroup) Leases(namespace string) coordinationv1client.LeaseInterface {
	return leases{LeaseInterface: g.CoordinationV1Interface.Leases(namespace), n: g.n}
}

// leases are the three calls the lease controller makes.
type leases struct {
	coordinationv1client.LeaseInterface
	n *Node
}

// note tells the Node how a request went, unless its context ended (the
// controller being started over, or the agent stopping).
func (l leases) note(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	l.n.leaseFailing.Store(!isAnswer(err))
	l.n.noteAnswer(err)
}

func (l leases) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	lease, err := l.LeaseInterface.Get(ctx, name, opts)
	l.note(ctx, err)
	return lease, err
}

func (l leases) Create(ctx context.Context, lease *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error) {
	created, err := l.LeaseInterface.Create(ctx, lease, opts)
	l.note(ctx, err)
	return created, err
}

func (l leases) Update(ctx context.Context, lease *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	updated, err := l.LeaseInterface.Update(ctx, lease, opts)
	l.note(ctx, err)
	return updated, err
}
