package app

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// syncBuffer is a bytes.Buffer safe to read while get --watch writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestGetWatchPrintsChanges(t *testing.T) {
	fake := &fakeAgent{}
	_, socket := serveAt(t, fake)
	out := &syncBuffer{}
	c := &cli{out: out, errOut: out, settings: settings{NodeName: testNode, LocalAPISocket: socket}}
	fake.set(info("u1", corev1.PodPending))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.get(ctx, "", getOutput{headers: true}, true) }()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), "Pending") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	fake.set(info("u1", corev1.PodRunning, running("containerd://a")))
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), "Running") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("get --watch: %v", err)
	}
	if got := out.String(); strings.Count(got, "NAME") != 1 || !strings.Contains(got, "Pending") || !strings.Contains(got, "Running") {
		t.Errorf("get --watch printed:\n%s\nwant one header, the pending row, then the running one", got)
	}
}
