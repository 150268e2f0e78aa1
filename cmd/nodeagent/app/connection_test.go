package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// A connected part starts only once the connection is resolved, and with
// its client.
func TestConnectedPartWaitsForTheConnection(t *testing.T) {
	c := newConnection(&Options{Kubeconfig: "kubeconfig"}, nil, logr.Discard())
	got := make(chan kubernetes.Interface, 1)
	done := make(chan error, 1)
	run := c.whenConnected(func(_ context.Context, client kubernetes.Interface) error {
		got <- client
		return errors.New("the part's own error")
	})
	go func() { done <- run(context.Background()) }()

	select {
	case <-got:
		t.Fatal("the part started before the connection was resolved")
	case <-time.After(50 * time.Millisecond):
	}
	client := fake.NewClientset()
	c.client = client
	close(c.ready)
	if g := <-got; g != client {
		t.Errorf("the part was given %v, want the connection's client", g)
	}
	if err := <-done; err == nil || err.Error() != "the part's own error" {
		t.Errorf("run: %v, want the part's error", err)
	}
}

// A connected part whose context ends before the connection is resolved
// never starts, and reports nothing: the error that ended the others is
// the one Run returns.
func TestConnectedPartNeverStartedReportsNothing(t *testing.T) {
	c := newConnection(&Options{Kubeconfig: "kubeconfig"}, nil, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	run := c.whenConnected(func(context.Context, kubernetes.Interface) error {
		t.Error("the part started without a connection")
		return nil
	})
	if err := run(ctx); err != nil {
		t.Errorf("run: %v, want nil", err)
	}
}

func TestStandaloneHasNoConnection(t *testing.T) {
	if c := newConnection(&Options{}, nil, logr.Discard()); c != nil {
		t.Errorf("connection without --kubeconfig: %v, want nil", c)
	}
	if ev := newEvents(context.Background(), "node", nil); ev != nil || ev.recorder() != nil {
		t.Errorf("events without a connection: %v, want none", ev)
	}
}
