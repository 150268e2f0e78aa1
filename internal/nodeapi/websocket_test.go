package nodeapi

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/apimachinery/pkg/util/remotecommand"
)

// upgradeRecorder is a streaming server that records the Upgrade header of
// each request it is sent, and refuses them (403).
type upgradeRecorder struct {
	mu       sync.Mutex
	upgrades []string
}

func (u *upgradeRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.upgrades = append(u.upgrades, r.Header.Get("Upgrade"))
	u.mu.Unlock()
	http.Error(w, "refused by the test", http.StatusForbidden)
}

// awaitUpgrade waits for the runtime's streaming server to be asked for an
// upgrade, and returns the protocol asked for.
func (u *upgradeRecorder) awaitUpgrade(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		u.mu.Lock()
		n := len(u.upgrades)
		var last string
		if n > 0 {
			last = u.upgrades[n-1]
		}
		u.mu.Unlock()
		if n > 0 {
			return last
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the runtime's streaming server was never asked for a stream")
	return ""
}

// wsUpgrade opens a WebSocket to the node API with the subprotocol given, as
// the apiserver does when the Node declares ExtendWebSocketsToKubelet, and
// returns the status the node answered.
func (w *world) wsUpgrade(path, protocol string) int {
	w.t.Helper()
	tlsConf := w.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(w.base, "https://"), tlsConf)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: node\r\nAuthorization: Bearer alice-token\r\n"+
		"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: %s\r\n\r\n", path, protocol)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return resp.StatusCode
}

// kubectl's WebSocket sessions are translated to SPDY towards the runtime,
// as the kubelet translates them: the runtime is asked for SPDY, never for
// a WebSocket it may not serve.
func TestWebSocketExecIsTranslatedToSPDY(t *testing.T) {
	rec := &upgradeRecorder{}
	w := newWorld(t, rec)
	if code := w.wsUpgrade("/exec/default/web/app?command=true&output=1&error=1", remotecommand.StreamProtocolV5Name); code != http.StatusSwitchingProtocols {
		t.Fatalf("a v5 WebSocket exec: %d, want 101", code)
	}
	if got := rec.awaitUpgrade(t); got != "SPDY/3.1" {
		t.Errorf("the runtime was asked to upgrade to %q, want SPDY/3.1", got)
	}
}

func TestWebSocketPortForwardIsTunnelledOverSPDY(t *testing.T) {
	rec := &upgradeRecorder{}
	w := newWorld(t, rec)
	// The tunnel upgrades the client once the runtime has: the runtime's
	// refusal reaches the client as it is.
	if code := w.wsUpgrade("/portForward/default/web", portforward.WebsocketsSPDYTunnelingPortForwardV1); code != http.StatusForbidden {
		t.Errorf("a tunnelled WebSocket port-forward the runtime refuses: %d, want its 403", code)
	}
	if got := rec.awaitUpgrade(t); got != "SPDY/3.1" {
		t.Errorf("the runtime was asked to upgrade to %q, want SPDY/3.1", got)
	}
}
