package nodeidentity

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
)

// rotatingConfig returns base with a transport that presents mgr's current
// certificate at each TLS handshake, and the dialer that tracks that
// transport's connections so that they can be closed when the certificate
// changes. Every client built from the config shares the transport.
func rotatingConfig(base *rest.Config, mgr certificate.Manager) (*rest.Config, *connrotation.Dialer, error) {
	tlsConfig, err := rest.TLSConfigFor(base)
	if err != nil {
		return nil, nil, fmt.Errorf("TLS configuration of %s: %w", base.Host, err)
	}
	if tlsConfig == nil { // a plain-HTTP server: nothing to present a certificate to
		return nil, nil, fmt.Errorf("server %s: a client certificate needs https", base.Host)
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := mgr.Current(); c != nil {
			return c, nil
		}
		// No certificate (expired, or none yet): the handshake goes on
		// without one and the apiserver answers 401, which the caller can
		// retry once the manager has a new one.
		return &tls.Certificate{}, nil
	}
	dialer := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	proxy := base.Proxy
	if proxy == nil {
		proxy = http.ProxyFromEnvironment
	}
	cfg := rest.AnonymousClientConfig(base)
	cfg.TLSClientConfig = rest.TLSClientConfig{} // the transport carries it
	cfg.Proxy = nil
	cfg.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               proxy,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         dialer.DialContext,
	})
	return cfg, dialer, nil
}

// closeOnRotation closes every connection dialer made whenever the
// certificate changes, until ctx ends. New connections then handshake
// with the new certificate; requests and watches on the old ones fail and
// are retried by their callers (reflectors re-list and re-watch).
//
// A renewal is seen at once through the store's notice; the periodic
// comparison is the fallback for a change without one.
func closeOnRotation(ctx context.Context, id *Identity, store *noticeStore, dialer *connrotation.Dialer) {
	last := id.current()
	for {
		t := time.NewTimer(checkInterval(last))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case stored := <-store.stored:
			t.Stop()
			waitServed(ctx, id, stored)
		case <-t.C:
		}
		cur := id.current()
		if cur == nil || cur == last {
			continue
		}
		id.log.Info("Client certificate rotated; closing the connections that used the old one",
			"notAfter", cur.Leaf.NotAfter)
		last = cur
		dialer.CloseAll()
	}
}

// waitServed waits (up to a second) until the manager serves the pair it
// just stored: it caches it right after storing it, and closing the
// connections before would let one dial in between with the old pair.
func waitServed(ctx context.Context, id *Identity, stored *tls.Certificate) {
	deadline := time.Now().Add(time.Second)
	for id.current() != stored && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
}

// noticeStore is the certificate store that says when it stored a new
// pair.
type noticeStore struct {
	certificate.FileStore
	stored chan *tls.Certificate // the latest pair stored, not yet seen
}

func newNoticeStore(fs certificate.FileStore) *noticeStore {
	return &noticeStore{FileStore: fs, stored: make(chan *tls.Certificate, 1)}
}

func (s *noticeStore) Update(cert, key []byte) (*tls.Certificate, error) {
	c, err := s.FileStore.Update(cert, key)
	if err != nil {
		return nil, err
	}
	// Only the latest pair matters: replace an unseen notice.
	select {
	case <-s.stored:
	default:
	}
	s.stored <- c
	return c, nil
}

// checkInterval is how often the certificate is compared: a hundredth of
// its life, between 100 ms and 10 s. The manager renews with at least a
// tenth of the life left, so the old connections are closed well before
// the old certificate expires, and the apiserver never sees a request made
// with it afterwards. (The comparison is a pointer's; only a certificate
// living under 100 s makes it run more than once a second.)
func checkInterval(c *tls.Certificate) time.Duration {
	if c == nil || c.Leaf == nil {
		return time.Second
	}
	d := c.Leaf.NotAfter.Sub(c.Leaf.NotBefore) / 100
	return min(max(d, 100*time.Millisecond), 10*time.Second)
}
