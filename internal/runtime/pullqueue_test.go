package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/internal/images"
)

func TestPullQueueSharesOnePullOfAnImage(t *testing.T) {
	q := newPullQueue(1)
	var calls atomic.Int32
	release := make(chan struct{})
	fn := func(context.Context) (string, error) {
		calls.Add(1)
		<-release
		return "sha256:abc", nil
	}
	var wg sync.WaitGroup
	refs := make([]string, 20)
	for i := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refs[i], _ = q.pull(context.Background(), pullKey("registry/app:1", nil), fn)
		}()
	}
	// Every waiter has joined once the pull's waiters count 20.
	waitFor(t, "20 waiters", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		c := q.inflight[pullKey("registry/app:1", nil)]
		return c != nil && c.waiters == 20
	})
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d pulls for 20 containers of one image, want 1", n)
	}
	for i, ref := range refs {
		if ref != "sha256:abc" {
			t.Errorf("waiter %d got %q", i, ref)
		}
	}
}

func TestPullQueueKeepsCredentialsApart(t *testing.T) {
	a := pullKey("registry/app:1", []images.AuthConfig{{Username: "a", Password: "x"}})
	b := pullKey("registry/app:1", []images.AuthConfig{{Username: "b", Password: "x"}})
	if a == b || a == pullKey("registry/app:1", nil) {
		t.Errorf("one key for different credentials")
	}
}

func TestPullQueueBoundsPullsUnderWay(t *testing.T) {
	for _, parallel := range []int{1, 3} {
		q := newPullQueue(parallel)
		var now, most atomic.Int32
		fn := func(context.Context) (string, error) {
			n := now.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(10 * time.Millisecond)
			now.Add(-1)
			return "ref", nil
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := q.pull(context.Background(), pullKey(fmt.Sprintf("img-%d", i), nil), fn); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if m := most.Load(); m > int32(parallel) {
			t.Errorf("parallel %d: %d pulls at once", parallel, m)
		}
	}
}

// A waiter that leaves does not cancel the pull others wait for; the last
// one to leave does, and a later ask pulls afresh.
func TestPullQueueWaitersLeave(t *testing.T) {
	q := newPullQueue(0)
	key := pullKey("registry/app:1", nil)
	started, release := make(chan struct{}, 2), make(chan struct{})
	var cancelled atomic.Int32
	fn := func(ctx context.Context) (string, error) {
		started <- struct{}{}
		select {
		case <-release:
			return "ref", nil
		case <-ctx.Done():
			cancelled.Add(1)
			return "", ctx.Err()
		}
	}
	first, leave := context.WithCancel(context.Background())
	got := make(chan error, 2)
	go func() { _, err := q.pull(first, key, fn); got <- err }()
	<-started
	go func() {
		ref, err := q.pull(context.Background(), key, fn)
		if err == nil && ref != "ref" {
			err = fmt.Errorf("ref %q", ref)
		}
		got <- err
	}()
	waitFor(t, "two waiters", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.inflight[key].waiters == 2 })
	leave()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("the waiter that left: %v", err)
	}
	close(release)
	if err := <-got; err != nil {
		t.Errorf("the waiter that stayed: %v", err)
	}
	if cancelled.Load() != 0 {
		t.Errorf("the pull was cancelled while a waiter stayed")
	}

	// Alone, leaving cancels the pull; the next ask starts another.
	release = make(chan struct{})
	alone, leaveAlone := context.WithCancel(context.Background())
	go func() { _, err := q.pull(alone, key, fn); got <- err }()
	<-started
	leaveAlone()
	<-got
	waitFor(t, "the pull cancelled", func() bool { return cancelled.Load() == 1 })
	go func() { _, err := q.pull(context.Background(), key, fn); got <- err }()
	<-started
	close(release)
	if err := <-got; err != nil {
		t.Errorf("a pull after one was cancelled: %v", err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
