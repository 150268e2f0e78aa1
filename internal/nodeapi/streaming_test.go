package nodeapi

import (
	"bufio"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	w := newWorld(t, nil)
	if code, body := w.do("POST", "/run/default/web/app?cmd=echo+hi", "alice-token"); code != 200 || body != "app-2: echo hi\n" {
		t.Errorf("run: %d %q", code, body)
	}
	if code, body := w.do("POST", "/run/default/web/idle?cmd=true", "alice-token"); code != 400 || !strings.Contains(body, "not running") {
		t.Errorf("run in a stopped container: %d %q", code, body)
	}
	if code, _ := w.do("GET", "/run/default/web/app?cmd=true", "alice-token"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /run: %d, want 405", code)
	}
}

// echoUpgrade is a streaming server that switches to a raw echo of
// what the client sends, and says whether it saw credentials.
func echoUpgrade(sawAuth *bool, mu *sync.Mutex) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		*sawAuth = r.Header.Get("Authorization") != ""
		mu.Unlock()
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-echo\r\n\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(conn, rw)
	})
}

func TestExecIsProxiedToTheRuntime(t *testing.T) {
	var sawAuth bool
	var mu sync.Mutex
	w := newWorld(t, echoUpgrade(&sawAuth, &mu))

	// A request that does not upgrade is refused by the proxy.
	if code, _ := w.do("POST", "/exec/default/web/app?command=sh&output=1", "alice-token"); code != http.StatusBadRequest {
		t.Errorf("exec without an upgrade: %d, want 400", code)
	}
	if code, body := w.do("POST", "/exec/default/web/app?command=sh", "alice-token"); code != http.StatusBadRequest || !strings.Contains(body, "at least one of") {
		t.Errorf("exec without streams: %d %q", code, body)
	}
	if code, body := w.do("POST", "/exec/default/web/uid-2/app?command=sh&output=1", "alice-token"); code != http.StatusNotFound {
		t.Errorf("exec naming another UID: %d %q, want 404", code, body)
	}

	conn := w.upgrade("/exec/default/web/uid-1/app?command=sh&command=-c&command=echo+hi&input=1&output=1")
	defer conn.Close()
	if _, err := conn.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Errorf("echo through the proxy: %q %v", line, err)
	}
	mu.Lock()
	if sawAuth {
		t.Error("the client's credentials reached the runtime's streaming server")
	}
	mu.Unlock()
	w.rt.mu.Lock()
	if got := strings.Join(w.rt.execs[len(w.rt.execs)-1], " "); got != "app-2 sh -c echo hi" {
		t.Errorf("exec asked of the runtime: %q", got)
	}
	w.rt.mu.Unlock()

	// Stopping the server ends the proxied stream.
	w.stop()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		t.Errorf("the stream after the server stopped: %v, want it closed", err)
	}
}

func TestPortForwardIsProxiedToTheRuntime(t *testing.T) {
	var sawAuth bool
	var mu sync.Mutex
	w := newWorld(t, echoUpgrade(&sawAuth, &mu))
	conn := w.upgrade("/portForward/default/web")
	defer conn.Close()
	if _, err := conn.Write([]byte("pf\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || line != "pf\n" {
		t.Errorf("echo through the proxy: %q %v", line, err)
	}
}

// A WebSocket port-forward of the older protocol names its ports in the
// query; the runtime is asked for a session with those ports, as the
// kubelet asks (its streaming server opens their channels). A bad port is
// refused before the runtime is asked; SPDY clients name none here.
func TestWebSocketPortForwardPortsReachTheRuntime(t *testing.T) {
	for _, tc := range []struct {
		query, upgrade string
		status         int
		want           []int32
	}{
		{"?ports=8080,9090&ports=7070", "websocket", http.StatusSwitchingProtocols, []int32{8080, 9090, 7070}},
		{"?ports=0", "websocket", http.StatusBadRequest, nil},
		{"?ports=http", "websocket", http.StatusBadRequest, nil},
		{"", "websocket", http.StatusBadRequest, nil},
		{"?ports=8080", "SPDY/3.1", http.StatusSwitchingProtocols, nil},
	} {
		t.Run(tc.query+" "+tc.upgrade, func(t *testing.T) {
			var sawAuth bool
			var mu sync.Mutex
			w := newWorld(t, echoUpgrade(&sawAuth, &mu))
			status := w.upgradeStatus("/portForward/default/web"+tc.query, tc.upgrade)
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			w.rt.mu.Lock()
			defer w.rt.mu.Unlock()
			switch {
			case tc.status == http.StatusBadRequest && len(w.rt.forwarded) != 0:
				t.Errorf("the runtime was asked (%v) for a refused request", w.rt.forwarded)
			case tc.status != http.StatusBadRequest && (len(w.rt.forwarded) != 1 || !slices.Equal(w.rt.forwarded[0], tc.want)):
				t.Errorf("the runtime was asked for ports %v, want [%v]", w.rt.forwarded, tc.want)
			}
		})
	}
}
