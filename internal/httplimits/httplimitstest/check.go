package httplimitstest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/internal/httplimits"
)

// Short are bounds small enough for a test to wait them out.
func Short() httplimits.Limits {
	return httplimits.Limits{
		ReadHeader:     500 * time.Millisecond,
		Read:           time.Second,
		Write:          2 * time.Second,
		Idle:           500 * time.Millisecond,
		MaxHeaderBytes: 4 << 10,
		MaxConns:       8,
	}
}

// slack is how much later than its bound a cut may come on a loaded
// machine.
const slack = 3 * time.Second

// early is how much sooner than its bound, by the client's clock, a cut
// may come.
const early = 20 * time.Millisecond

// Check runs, as subtests, clients that misbehave against a server that
// serves path with 200 and was started with lim, reached through dial.
func Check(t *testing.T, dial func() (net.Conn, error), path string, lim httplimits.Limits) {
	waitServing(t, dial)
	t.Run("silent and trickling clients are cut off while a normal request succeeds", func(t *testing.T) {
		start := time.Now()
		var silent []net.Conn
		// Room for the trickler, the normal request and a few
		// connections of other clients of the server.
		for range lim.MaxConns - 5 {
			silent = append(silent, mustDial(t, dial))
		}
		trickled := trickle(t, dial)

		began := time.Now()
		if status := get(t, dial, path, ""); status != http.StatusOK {
			t.Errorf("GET %s with %d silent clients = %d, want 200", path, len(silent), status)
		}
		if took := time.Since(began); took >= lim.ReadHeader {
			t.Errorf("GET %s took %v: it waited for the silent clients to be cut", path, took)
		}
		for i, c := range silent {
			waitClosed(t, c, start, lim.ReadHeader, fmt.Sprintf("silent client %d", i))
		}
		// The server's deadline starts when it accepts, a little before
		// the client starts its clock: early by a few milliseconds is on time.
		if took := <-trickled; took < lim.ReadHeader-early || took > lim.ReadHeader+slack {
			t.Errorf("a client trickling its headers a byte at a time was cut after %v, want about %v", took, lim.ReadHeader)
		}
	})

	t.Run("an idle keep-alive connection is closed", func(t *testing.T) {
		c := mustDial(t, dial)
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		waitClosed(t, c, time.Now(), lim.Idle, "the idle keep-alive connection")
	})

	t.Run("connections beyond the cap wait until others close", func(t *testing.T) {
		// The first MaxConns are accepted and cut after ReadHeader; only
		// then are the others accepted, and cut a ReadHeader later.
		const extra = 3
		start := time.Now()
		conns := make([]net.Conn, lim.MaxConns+extra)
		for i := range conns {
			conns[i] = mustDial(t, dial)
		}
		var mu sync.Mutex
		var late int
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Go(func() {
				took := waitClosed(t, c, start, 2*lim.ReadHeader, fmt.Sprintf("connection %d", i))
				if took > lim.ReadHeader*3/2 {
					mu.Lock()
					late++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if late < extra {
			t.Errorf("%d of %d connections were cut late, want at least the %d beyond the cap of %d: the server accepted them all at once",
				late, len(conns), extra, lim.MaxConns)
		}
	})

	t.Run("over-large headers get 431", func(t *testing.T) {
		big := "X-Big: " + strings.Repeat("a", 4*lim.MaxHeaderBytes+8192) + "\r\n"
		if status := get(t, dial, path, big); status != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("GET %s with %d bytes of headers = %d, want 431", path, len(big), status)
		}
		if status := get(t, dial, path, "X-Small: a\r\n"); status != http.StatusOK {
			t.Errorf("GET %s after the refusal = %d, want 200", path, status)
		}
	})
}

func mustDial(t *testing.T, dial func() (net.Conn, error)) net.Conn {
	t.Helper()
	c, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get sends one GET with the extra header lines and returns the status.
func get(t *testing.T, dial func() (net.Conn, error), path, header string) int {
	t.Helper()
	c := mustDial(t, dial)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// The write may fail once the server has answered 431 and closed.
	_, _ = fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n", path, header)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// trickle sends a request's headers a byte every 50 ms and never ends
// them; the channel gets how long the server took to close.
func trickle(t *testing.T, dial func() (net.Conn, error)) <-chan time.Duration {
	c := mustDial(t, dial)
	start := time.Now()
	done := make(chan time.Duration, 1)
	go func() {
		req := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 1<<20)
		_ = c.SetReadDeadline(start.Add(time.Minute))
		stop := make(chan struct{})
		go func() {
			defer close(stop)
			_, _ = io.Copy(io.Discard, c)
		}()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- time.Since(start)
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := c.Write([]byte{req[i]}); err != nil {
				<-stop
				done <- time.Since(start)
				return
			}
		}
	}()
	return done
}

// waitClosed waits for the server to close c, which it must do about
// bound after start, and returns when it did.
func waitClosed(t *testing.T, c net.Conn, start time.Time, bound time.Duration, what string) time.Duration {
	_ = c.SetReadDeadline(start.Add(bound + slack))
	_, err := io.Copy(io.Discard, c)
	took := time.Since(start)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("%s still open after %v, want it closed after about %v", what, took, bound)
	}
	return took
}

// waitServing waits until a dial succeeds: the server may still be
// starting.
func waitServing(t *testing.T, dial func() (net.Conn, error)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := dial()
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never accepted a connection: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
