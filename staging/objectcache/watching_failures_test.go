package objectcache

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestWatchingListErrorsAreRetriedWithBackoffAndReported(t *testing.T) {
	api := newFakeAPI(configMap("a", "1", "v1"))
	api.failLists("configmaps", apierrors.NewForbidden(corev1.Resource("configmaps"), "a", errors.New("no path to this object")))
	clk := newClock()
	m := startWatching(t, ConfigMaps(), api, clk, WatchingOptions{SyncTimeout: time.Second, RetryInitial: time.Second, RetryMax: 4 * time.Second})
	m.RegisterPod(podWithConfigMaps("p", "a"))
	eventually(t, func() bool { return api.listCount("configmaps/a") == 1 }, "the first list")

	// Each retry waits longer: 1s, 2s, 4s (+ up to half in jitter).
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		before := api.listCount("configmaps/a")
		// Two waiters: Run's ticker and the backoff timer.
		eventually(t, func() bool { return clk.Waiters() == 2 }, "the backoff timer")
		clk.Step(wait - 1) // too early, whatever the jitter
		time.Sleep(5 * time.Millisecond)
		if n := api.listCount("configmaps/a"); n != before {
			t.Fatalf("retry %d came before %v", i+1, wait)
		}
		clk.Step(wait/2 + 1)
		eventually(t, func() bool { return api.listCount("configmaps/a") == before+1 }, "retry %d", i+1)
	}

	// Get waits SyncTimeout, then names the sentinel and the cause.
	errc := make(chan error, 1)
	go func() { _, err := m.Get(context.Background(), ns, "a"); errc <- err }()
	err := stepUntil(t, clk, 100*time.Millisecond, errc)
	if !errors.Is(err, ErrNotSynced) || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "configmaps default/a") {
		t.Fatalf("Get = %v; want ErrNotSynced wrapping Forbidden, naming the object", err)
	}

	// Once the list works, Get succeeds and the backoff is over.
	api.failLists("configmaps", nil)
	clk.Step(6 * time.Second)
	eventually(t, func() bool { _, err := m.Get(context.Background(), ns, "a"); return err == nil }, "the list to succeed")
}

func TestWatchingRelistsWhenTheWatchFails(t *testing.T) {
	api := newFakeAPI(configMap("a", "1", "v1"))
	clk := newClock()
	m := startWatching(t, ConfigMaps(), api, clk, WatchingOptions{RetryInitial: time.Second})
	m.RegisterPod(podWithConfigMaps("p", "a"))
	w1 := api.watcher(t, "configmaps/a", 1)

	// An expired resource version: list again at once, then watch.
	w1.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
	api.watcher(t, "configmaps/a", 2)
	if n := api.listCount("configmaps/a"); n != 2 {
		t.Errorf("lists after an expired watch = %d, want 2", n)
	}

	// Any other error: back off, then list again.
	w2 := api.watcher(t, "configmaps/a", 2)
	w2.Error(&apierrors.NewInternalError(errors.New("etcd hiccup")).ErrStatus)
	time.Sleep(5 * time.Millisecond)
	if n := api.opened("configmaps/a"); n != 2 {
		t.Fatalf("a watch reopened at once after an error (%d opened)", n)
	}
	clk.Step(2 * time.Second)
	api.watcher(t, "configmaps/a", 3)
	if n := api.listCount("configmaps/a"); n != 3 {
		t.Errorf("lists after a failed watch = %d, want 3", n)
	}

	// A watch the server closes after a while is resumed without a list.
	clk.Step(time.Minute)
	api.watcher(t, "configmaps/a", 3).Stop()
	api.watcher(t, "configmaps/a", 4)
	if n := api.listCount("configmaps/a"); n != 3 {
		t.Errorf("lists after a closed watch = %d, want still 3", n)
	}
}

func TestWatchingGetErrors(t *testing.T) {
	api := newFakeAPI(configMap("a", "1", "v1"))
	clk := newClock()
	m, err := NewWatching(ConfigMaps(), WatchingOptions{Client: api, Clock: clk, SyncTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(context.Background(), ns, "a"); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("Get of an unreferenced object = %v, want ErrNotRegistered", err)
	}

	// Registered before Run: Get says why nothing syncs.
	m.RegisterPod(podWithConfigMaps("p", "a"))
	errc := make(chan error, 1)
	go func() { _, err := m.Get(context.Background(), ns, "a"); errc <- err }()
	if err := stepUntil(t, clk, 100*time.Millisecond, errc); !errors.Is(err, ErrNotSynced) || !strings.Contains(err.Error(), "Run has not been called") {
		t.Errorf("Get before Run = %v, want ErrNotSynced naming Run", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	canceled, cancelGet := context.WithCancel(context.Background())
	cancelGet()
	if _, err := m.Get(canceled, ns, "a"); !errors.Is(err, ErrNotSynced) || !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context = %v, want ErrNotSynced and context.Canceled", err)
	}

	// Run starts what was registered; a second Run is refused.
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	mustGet(t, m.Get, "a")
	if err := m.Run(ctx); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run = %v, want ErrAlreadyRunning", err)
	}

	// After Run returns, every watch has ended and Get refuses.
	w := api.watcher(t, "configmaps/a", 1)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if !w.IsStopped() || m.ActiveWatches() != 0 {
		t.Errorf("after Run: watch stopped %v, ActiveWatches %d; want true, 0", w.IsStopped(), m.ActiveWatches())
	}
	if _, err := m.Get(context.Background(), ns, "a"); !errors.Is(err, ErrStopped) {
		t.Errorf("Get after Run = %v, want ErrStopped", err)
	}
	m.RegisterPod(podWithConfigMaps("q", "b")) // starts nothing
	if n := m.ActiveWatches(); n != 0 {
		t.Errorf("ActiveWatches after a registration past Run = %d, want 0", n)
	}
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}

// stepUntil advances clk by step until errc yields.
func stepUntil(t *testing.T, clk interface{ Step(time.Duration) }, step time.Duration, errc <-chan error) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-errc:
			return err
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for Get to return")
		}
		clk.Step(step)
		time.Sleep(time.Millisecond)
	}
}
