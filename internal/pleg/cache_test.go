package pleg

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestCacheGet(t *testing.T) {
	c := NewCache()
	if s, err := c.Get("u1"); err != nil || s.ID != "u1" || len(s.Containers) != 0 {
		t.Errorf("Get of an unknown pod = %+v, %v; want an empty status", s, err)
	}
	boom := errors.New("boom")
	c.Set("u1", nil, boom, t0)
	if _, err := c.Get("u1"); !errors.Is(err, boom) {
		t.Errorf("Get after a failed fetch: %v, want boom", err)
	}
	c.Set("u1", &runtime.PodStatus{ID: "u1", Name: "new"}, nil, t0.Add(2*time.Second))
	c.Set("u1", &runtime.PodStatus{ID: "u1", Name: "old"}, nil, t0.Add(time.Second))
	if s, _ := c.Get("u1"); s.Name != "new" {
		t.Errorf("an older Set replaced a newer one: %q", s.Name)
	}
	c.Delete("u1")
	if s, _ := c.Get("u1"); s.Name != "" {
		t.Errorf("Get after Delete = %+v", s)
	}
}

// getAsync runs GetNewerThan in a goroutine and returns its result channel.
func getAsync(ctx context.Context, c *Cache, uid string, after time.Time) <-chan string {
	out := make(chan string, 1)
	go func() {
		s, err := c.GetNewerThan(ctx, typesUID(uid), after)
		switch {
		case err != nil:
			out <- "error: " + err.Error()
		default:
			out <- string(s.ID) + "/" + s.Name
		}
	}()
	return out
}

func expectBlocked(t *testing.T, ch <-chan string) {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("GetNewerThan returned %q, want it to wait", got)
	case <-time.After(20 * time.Millisecond):
	}
}

func expect(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("GetNewerThan = %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("GetNewerThan still waits, want %q", want)
	}
}

func TestCacheGetNewerThan(t *testing.T) {
	ctx := context.Background()

	t.Run("a newer Set of the pod answers", func(t *testing.T) {
		c := NewCache()
		c.Set("u1", &runtime.PodStatus{ID: "u1", Name: "stale"}, nil, t0)
		ch := getAsync(ctx, c, "u1", t0)
		expectBlocked(t, ch)
		c.Set("u2", &runtime.PodStatus{ID: "u2"}, nil, t0.Add(time.Second)) // another pod
		expectBlocked(t, ch)
		c.Set("u1", &runtime.PodStatus{ID: "u1", Name: "fresh"}, nil, t0.Add(time.Second))
		expect(t, ch, "u1/fresh")
	})

	t.Run("a relist that started later confirms the cached status", func(t *testing.T) {
		c := NewCache()
		c.Set("u1", &runtime.PodStatus{ID: "u1", Name: "same"}, nil, t0)
		ch := getAsync(ctx, c, "u1", t0)
		c.UpdateTime(t0) // not after t0
		expectBlocked(t, ch)
		c.UpdateTime(t0.Add(time.Second))
		expect(t, ch, "u1/same")
	})

	t.Run("a pod the runtime has nothing of yields an empty status", func(t *testing.T) {
		c := NewCache()
		ch := getAsync(ctx, c, "u9", t0)
		expectBlocked(t, ch)
		c.UpdateTime(t0.Add(time.Second))
		expect(t, ch, "u9/")
	})

	t.Run("already fresh: no wait", func(t *testing.T) {
		c := NewCache()
		c.UpdateTime(t0.Add(time.Second))
		expect(t, getAsync(ctx, c, "u1", t0), "u1/")
	})

	t.Run("the context ends the wait", func(t *testing.T) {
		c := NewCache()
		cctx, cancel := context.WithCancel(ctx)
		ch := getAsync(cctx, c, "u1", t0)
		expectBlocked(t, ch)
		cancel()
		expect(t, ch, "error: context canceled")
	})
}
