package runtimeclass

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	nodelisters "k8s.io/client-go/listers/node/v1"
	"k8s.io/client-go/tools/cache"
)

// ErrNotSynced: the RuntimeClasses have not been read once yet, so a
// class cannot be told from one that does not exist. The sandbox waits
// and is tried again.
var ErrNotSynced = errors.New("the cluster's RuntimeClasses have not been read yet")

// Options configure a Classes.
type Options struct {
	// SyncWait bounds how long Handler waits for the first read of the
	// RuntimeClasses before it fails with ErrNotSynced (default 2 s).
	SyncWait time.Duration
	Logger   logr.Logger
}

// Classes resolves RuntimeClass names from an informer's cache. It is
// safe for concurrent use; until Run has read the classes once, Handler
// resolves no name.
type Classes struct {
	opts   Options
	lister atomic.Pointer[nodelisters.RuntimeClassLister]
	synced chan struct{}
}

// New returns a Classes; Run starts its informer.
func New(opts Options) *Classes {
	if opts.SyncWait <= 0 {
		opts.SyncWait = 2 * time.Second
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	return &Classes{opts: opts, synced: make(chan struct{})}
}

// Run lists and watches the cluster's RuntimeClasses until ctx ends.
func (c *Classes) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(slim))
	classes := factory.Node().V1().RuntimeClasses()
	informer, lister := classes.Informer(), classes.Lister()
	// The informer ends with ctx; Run does not wait for it to have
	// ended (the factory's Shutdown): after an apiserver outage its
	// reflector may be sleeping out a retry delay of up to half a minute
	// that does not watch ctx (client-go's watch-list retry), and the
	// agent's stop must not wait for that.
	factory.Start(ctx.Done())
	c.lister.Store(&lister)
	if cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		close(c.synced)
		c.opts.Logger.V(1).Info("RuntimeClasses read; pods naming one get its handler")
	}
	<-ctx.Done()
	return nil
}

// Handler returns the runtime handler of the RuntimeClass name; "" names
// no class and gets the runtime's default handler. A class that does not
// exist yields the lister's NotFound error, as in the kubelet.
func (c *Classes) Handler(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if err := c.waitSynced(ctx); err != nil {
		return "", err
	}
	rc, err := (*c.lister.Load()).Get(name)
	if err != nil {
		return "", err
	}
	return rc.Handler, nil
}

func (c *Classes) waitSynced(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	default:
	}
	t := time.NewTimer(c.opts.SyncWait)
	defer t.Stop()
	select {
	case <-c.synced:
		return nil
	case <-t.C:
		return ErrNotSynced
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotSynced, ctx.Err())
	}
}

// slim keeps of a RuntimeClass only its name and handler; the overhead
// and scheduling are the apiserver's and the scheduler's business.
func slim(obj any) (any, error) {
	rc, ok := obj.(*nodev1.RuntimeClass)
	if !ok {
		return obj, nil // a tombstone
	}
	return &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name, UID: rc.UID, ResourceVersion: rc.ResourceVersion},
		Handler:    rc.Handler,
	}, nil
}
