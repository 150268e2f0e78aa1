package localapi

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// start runs a Server on path until the test ends, and waits until it
// answers.
func start(t *testing.T, path string) (stop func() error) {
	t.Helper()
	s, err := New(Options{SocketPath: path, Provider: &fakeProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context ended")
			return nil
		}
	})
	t.Cleanup(func() { stop() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, err := Dial(path); err == nil {
			_, err = c.Health(context.Background())
			c.Close()
			if err == nil {
				return stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server on %s never answered", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunCreatesAPrivateSocketAndRemovesItOnStop(t *testing.T) {
	path := socketPath(t)
	stop := start(t, path)

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode(); mode.Type() != os.ModeSocket || mode.Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", mode)
	}
	if err := stop(); err != nil {
		t.Fatalf("Run returned %v after a clean stop", err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket still exists after stop: %v", err)
	}
}

func TestRunReplacesAStaleSocket(t *testing.T) {
	path := socketPath(t)
	// A socket nobody serves on, as a killed agent leaves behind.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the stale socket was not left behind: %v", err)
	}
	start(t, path) // answers: the stale socket was replaced
}

func TestRunRefusesASocketInUse(t *testing.T) {
	path := socketPath(t)
	start(t, path)

	s, err := New(Options{SocketPath: path, Provider: &fakeProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(context.Background())
	if !errors.Is(err, ErrSocketInUse) {
		t.Fatalf("second Run on %s = %v, want ErrSocketInUse", path, err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("the refused Run removed the first server's socket: %v", err)
	}
}

func TestRunRefusesToReplaceARegularFile(t *testing.T) {
	path := socketPath(t)
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{SocketPath: path, Provider: &fakeProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Run over a regular file = %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Error("the regular file was touched")
	}
}

func TestNewRequiresSocketAndProvider(t *testing.T) {
	if _, err := New(Options{Provider: &fakeProvider{}}); err == nil {
		t.Error("New without SocketPath succeeded")
	}
	if _, err := New(Options{SocketPath: "/x.sock"}); err == nil {
		t.Error("New without Provider succeeded")
	}
}

func TestDialNamesAMissingSocket(t *testing.T) {
	_, err := Dial("/nonexistent/nodeagent.sock")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/nodeagent.sock") {
		t.Fatalf("Dial(missing) = %v, want an error naming the path", err)
	}
}
