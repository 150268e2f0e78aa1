package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// maxRedirects is how many redirects to the same host a probe follows.
const maxRedirects = 10

// userAgent is sent unless the probe sets its own; servers that tell
// probes apart look for the kubelet's prefix.
const userAgent = "kube-probe/nodeagent"

// probeHTTP gets the URL the action names. A status from 200 to 399 is a
// success. As the kubelet does, it follows redirects to the same host (at
// most maxRedirects) and stops at one to another host, which counts as a
// success with a warning; it does not verify certificates
// and uses no proxy and no kept-alive connection.
func probeHTTP(ctx context.Context, a *corev1.HTTPGetAction, t target, podIP string, timeout time.Duration) (Result, string) {
	port, err := resolvePort(a.Port, t.ports)
	if err != nil {
		return Failure, err.Error()
	}
	host := a.Host
	if host == "" {
		host = podIP
	}
	if host == "" {
		return Failure, "the pod has no IP yet"
	}
	scheme := strings.ToLower(string(a.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := a.Path
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u, err := url.Parse(scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + path)
	if err != nil {
		return Failure, fmt.Sprintf("bad probe URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Failure, fmt.Sprintf("bad probe request: %v", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range a.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Failure, fmt.Sprintf("GET %s: no answer within %s", u.Redacted(), timeout)
		}
		return Failure, err.Error()
	}
	defer func() { _ = resp.Body.Close() }() // a read-only body
	code := resp.StatusCode
	if code < 200 || code >= 400 {
		// The status code says why; the body is the application's, and
		// may say what a probe's failure message (in events, in the
		// pod's status) must not.
		return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", code)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
	if code >= 300 {
		// The words the kubelet's warning has, which tools look for.
		return successWithWarning, "Probe terminated redirects, Response body: " + bounded(body)
	}
	return Success, bounded(body)
}

// probeClient is shared by every HTTP probe: it holds no connection
// between probes, so sharing it shares no state.
var probeClient = &http.Client{
	Transport: &http.Transport{
		Proxy:              nil,
		DisableKeepAlives:  true,
		DisableCompression: true,
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- probes check health, not identity, as the kubelet's do
	},
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if req.URL.Hostname() != via[0].URL.Hostname() {
			return http.ErrUseLastResponse
		}
		return nil
	},
}
