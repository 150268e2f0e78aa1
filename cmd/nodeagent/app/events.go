package app

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// events records the agent's Kubernetes events in connected mode. The
// recorder exists from the start, so that what the sources say before the
// node's identity is loaded (a refused manifest, say) is not lost: the
// broadcaster queues it until the connection is resolved.
type events struct {
	broadcaster record.EventBroadcaster
	rec         record.EventRecorder
}

// recorder is nil for nil events (standalone mode): nothing is recorded.
func (e *events) recorder() record.EventRecorder {
	if e == nil {
		return nil
	}
	return e.rec
}

// newEvents records to the apiserver of conn; nil in standalone mode (nil
// conn). The events go out, those queued included, once conn is resolved.
func newEvents(ctx context.Context, nodeName string, conn *connection) *events {
	if conn == nil {
		return nil
	}
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&deferredSink{ctx: ctx, conn: conn})
	return &events{
		broadcaster: b,
		rec:         b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "nodeagent", Host: nodeName}),
	}
}

// shutdown stops the broadcaster; nil events (standalone mode) have none.
func (e *events) shutdown() {
	if e != nil {
		e.broadcaster.Shutdown()
	}
}

// deferredSink waits for the apiserver connection before it writes.
type deferredSink struct {
	ctx  context.Context
	conn *connection
}

func (d *deferredSink) wait() (record.EventSink, error) {
	client, err := d.conn.wait(d.ctx)
	if err != nil {
		return nil, err
	}
	return &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}, nil
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
