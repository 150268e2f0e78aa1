package config

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	clocktesting "k8s.io/utils/clock/testing"
)

// A source that started without inotify (the host's instances used up)
// tries for it again at each resync, and once it has it, a new manifest
// is picked up at its event, not at the next resync.
func TestFileSourceWatchesAgainOnceInotifyIsBack(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", podManifest("a", "img:1"))
	clk := clocktesting.NewFakeClock(time.Now())
	m := NewMerger(MergerOptions{Buffer: 100})
	fs, err := NewFileSource(FileOptions{Path: dir, NodeName: testNode, Sink: m, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	fs.newWatcher = func() (*fsnotify.Watcher, error) {
		if calls.Add(1) == 1 {
			return nil, syscall.EMFILE // too many inotify instances
		}
		return fsnotify.NewWatcher()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fs.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	}()
	expect(t, m, "ADD file [file:a-node1]")

	eventually(t, "the resync timer", clk.HasWaiters)
	clk.Step(20 * time.Second) // the resync finds inotify back
	eventually(t, "a watch again", func() bool { return calls.Load() >= 3 })
	writeFile(t, dir, "b.yaml", podManifest("b", "img:1"))
	// Only the debounce is stepped, never as far as the next resync: b
	// comes by its inotify event.
	var got []string
	for start := time.Now(); len(got) == 0; {
		if time.Since(start) > 5*time.Second {
			t.Fatal("b not picked up without a resync")
		}
		clk.Step(5 * time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		got = drain(m.Updates())
	}
	if len(got) != 1 || got[0] != "ADD file [file:b-node1]" {
		t.Errorf("updates %q, want b added", got)
	}
}
