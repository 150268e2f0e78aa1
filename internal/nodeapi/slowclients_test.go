package nodeapi

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// A client is given readHeaderTimeout for its TLS handshake and its
// request's headers, and is cut off after it. The test's own deadline is
// far longer: the connection must end because the server closed it.
const (
	shortHeaderTimeout = time.Second // the handshake too must fit, on a loaded machine under -race
	clientPatience     = 20 * time.Second
)

func slowClientWorld(t *testing.T) (*world, string) {
	t.Helper()
	w := newWorldWith(t, nil, func(o *Options) { o.readHeaderTimeout = shortHeaderTimeout })
	return w, strings.TrimPrefix(w.base, "https://")
}

// closedByServer reads from c until the server closes it; an error if
// the client's own deadline passes first.
func closedByServer(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(clientPatience))
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("the server kept the connection open for %v", clientPatience)
	}
	return nil
}

func TestSilentClientIsClosed(t *testing.T) {
	_, addr := slowClientWorld(t)
	c, err := net.Dial("tcp", addr) // no handshake, nothing sent
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := closedByServer(c); err != nil {
		t.Fatal(err)
	}
}

func TestSlowHeadersAreCutOff(t *testing.T) {
	w, addr := slowClientWorld(t)
	c, err := tls.Dial("tcp", addr, w.client.Transport.(*http.Transport).TLSClientConfig.Clone())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closed := make(chan error, 1)
	go func() { closed <- closedByServer(c) }()
	// One byte of a header every few milliseconds, never the blank line
	// that ends the headers; the writes stop when the server has closed.
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: node\r\n"); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	sent := 0
	for {
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
			if sent == 0 {
				t.Error("closed before the slow headers began")
			}
			return
		case <-tick.C:
			if _, err := c.Write([]byte("X")); err == nil {
				sent++
			}
		}
	}
}
