package workqueuerun

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunRetriesFailuresLooksAgainAndEnds(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond))
	var mu sync.Mutex
	calls := map[string]int{}
	var failed []string
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(done)
		Run(ctx, Loop[string]{
			Queue: q, Workers: 2, ResyncInterval: time.Hour, Clock: clock.RealClock{},
			Resync: func() { q.Add("flaky"); q.Add("again"); q.Add("once") },
			Sync: func(_ context.Context, key string) (time.Duration, error) {
				mu.Lock()
				defer mu.Unlock()
				calls[key]++
				switch {
				case key == "flaky" && calls[key] < 3:
					return 0, errors.New("not yet")
				case key == "again" && calls[key] < 2:
					return time.Millisecond, nil
				}
				return 0, nil
			},
			Failed: func(key string, _ error) { mu.Lock(); failed = append(failed, key); mu.Unlock() },
		})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		ok := calls["flaky"] == 3 && calls["again"] == 2 && calls["once"] == 1
		mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls = %v", calls)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if len(failed) != 2 || failed[0] != "flaky" {
		t.Errorf("failures told = %v, want flaky twice", failed)
	}
	if !q.ShuttingDown() {
		t.Error("the queue is not shut down after Run")
	}
}
