package app

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// events records the agent's Kubernetes events in connected mode. The
// recorder exists from the start, so that what the sources say before the
// node's identity is loaded (a refused manifest, say) is not lost: the
// broadcaster queues it until connect gives it a client.
type events struct {
	broadcaster record.EventBroadcaster
	rec         record.EventRecorder
	sink        *deferredSink
}

// recorder is nil for nil events (standalone mode): nothing is recorded.
func (e *events) recorder() record.EventRecorder {
	if e == nil {
		return nil
	}
	return e.rec
}

func newEvents(ctx context.Context, nodeName string) *events {
	b := record.NewBroadcaster(record.WithContext(ctx))
	sink := &deferredSink{ctx: ctx, ready: make(chan struct{})}
	b.StartRecordingToSink(sink)
	return &events{
		broadcaster: b,
		rec:         b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "nodeagent", Host: nodeName}),
		sink:        sink,
	}
}

// connect sends the events, those queued included, to the apiserver.
func (e *events) connect(client kubernetes.Interface) {
	e.sink.sink = &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}
	close(e.sink.ready)
}

func (e *events) shutdown() { e.broadcaster.Shutdown() }

// deferredSink waits for the apiserver connection before it writes.
type deferredSink struct {
	ctx   context.Context
	ready chan struct{}
	sink  record.EventSink // set before ready is closed
}

func (d *deferredSink) wait() (record.EventSink, error) {
	select {
	case <-d.ready:
		return d.sink, nil
	case <-d.ctx.Done():
		return nil, d.ctx.Err()
	}
}

func (d *deferredSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s, err := d.wait()
	if err != nil {
		return nil, err
	}
	return s.Create(e)
}

func (d *deferredSink) Update(e *corev1.Event) (*corev1.Event, error) {
	s, err := d.wait()
	if err != nil {
		return nil, err
	}
	return s.Update(e)
}

func (d *deferredSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	s, err := d.wait()
	if err != nil {
		return nil, err
	}
	return s.Patch(e, data)
}
