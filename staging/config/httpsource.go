package config

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// HTTPOptions configure an HTTPSource. URL, NodeName and Sink are required.
type HTTPOptions struct {
	// URL is an http or https URL. Its userinfo and query values are
	// shown redacted wherever the source names it (RedactURL).
	URL string
	// Header is sent with every request (for example Authorization), and
	// with redirects only while they stay on the URL's server.
	Header   http.Header
	NodeName string
	Sink     Sink
	// Interval between polls; default 20s.
	Interval time.Duration
	// Timeout bounds one request, body included; default 10s.
	Timeout time.Duration
	// MaxBodyBytes bounds the body; default and at most manifest.MaxManifestBytes.
	MaxBodyBytes int64
	// Client defaults to a plain http.Client. The source uses a copy whose
	// CheckRedirect applies its redirect rules before the client's own.
	Client   *http.Client
	Recorder EventRecorder
	Logger   logr.Logger
	Clock    clock.Clock
	Metrics  *Metrics
}

// HTTPSource polls a URL serving a Pod or a PodList manifest and sends its
// pods as a SET whenever the body changes. A failed fetch, an empty body or
// a refused manifest keeps the pods last accepted; to remove every pod the
// URL serves an empty PodList. The source is seen by the merger after its
// first accepted body. The URL's credentials are never shown: logs, events
// and errors name it redacted, and its pods' identity hashes the redacted
// URL, so that rotating a credential in the URL restarts no pod.
type HTTPSource struct {
	opts    HTTPOptions
	origin  string // the URL, redacted
	log     logr.Logger
	nodeRef *corev1.ObjectReference

	// Owned by Run.
	lastSum [sha256.Size]byte
	haveSum bool

	mu       sync.Mutex
	fetchErr error // the last poll failed to fetch
	bodyErr  error // the last fetched body was refused
}

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field (the URL redacted); zero means
// the default. It returns the parsed URL.
func (o HTTPOptions) validate() (*url.URL, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: HTTPOptions.%s", ErrInvalidOptions, fmt.Sprintf(format, args...)))
	}
	var u *url.URL
	if o.URL == "" {
		bad("URL is required")
	} else {
		var err error
		if u, err = url.Parse(o.URL); err == nil {
			err = checkScheme(u)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: HTTPOptions.URL %s: %w", ErrInvalidOptions, RedactURL(o.URL), redactError(err)))
		}
	}
	if o.NodeName == "" {
		bad("NodeName is required")
	}
	if o.Sink == nil {
		bad("Sink is required")
	}
	if o.MaxBodyBytes > manifest.MaxManifestBytes {
		bad("MaxBodyBytes %d is above MaxManifestBytes (%d), the most a manifest may hold", o.MaxBodyBytes, manifest.MaxManifestBytes)
	}
	if o.MaxBodyBytes < 0 {
		bad("MaxBodyBytes is negative (%d)", o.MaxBodyBytes)
	}
	for name, d := range map[string]time.Duration{"Interval": o.Interval, "Timeout": o.Timeout} {
		if d < 0 {
			bad("%s is negative (%v)", name, d)
		}
	}
	return u, errors.Join(errs...)
}

// NewHTTPSource returns an HTTPSource, or an error naming a missing option.
func NewHTTPSource(opts HTTPOptions) (*HTTPSource, error) {
	u, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if opts.Interval == 0 {
		opts.Interval = 20 * time.Second
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = manifest.MaxManifestBytes
	}
	client := http.Client{}
	if opts.Client != nil {
		client = *opts.Client
	}
	client.CheckRedirect = redirectPolicy(opts.Header, client.CheckRedirect)
	opts.Client = &client
	if opts.Recorder == nil {
		opts.Recorder = nopRecorder{}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	origin := redactURL(u)
	return &HTTPSource{
		opts:    opts,
		origin:  origin,
		log:     opts.Logger.WithName("http-source").WithValues("url", origin),
		nodeRef: nodeReference(opts.NodeName),
	}, nil
}

// Run polls until ctx ends, and returns nil then.
func (s *HTTPSource) Run(ctx context.Context) error {
	for {
		s.poll(ctx)
		t := s.opts.Clock.NewTimer(s.opts.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// Err returns why the last poll failed, or nil if it succeeded.
func (s *HTTPSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fetchErr != nil {
		return s.fetchErr
	}
	return s.bodyErr
}

func (s *HTTPSource) poll(ctx context.Context) {
	data, err := s.fetch(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		s.report(&s.fetchErr, err)
		return
	}
	s.report(&s.fetchErr, nil)
	sum := sha256.Sum256(data)
	if s.haveSum && sum == s.lastSum {
		return // the same pods were sent, or the same body refused
	}
	s.lastSum, s.haveSum = sum, true
	if len(bytes.TrimSpace(data)) == 0 {
		s.report(&s.bodyErr, &manifest.ManifestError{Origin: s.origin, Reason: manifest.ReasonEmpty,
			Detail: "empty body; the pods last accepted are kept (serve an empty PodList to remove them)"})
		return
	}
	pods, err := manifest.ParseManifest(data, manifest.ParseOptions{
		NodeName: s.opts.NodeName, Source: podtypes.HTTPSource, Origin: s.origin, Now: s.opts.Clock.Now(),
	})
	if err != nil {
		s.report(&s.bodyErr, err)
		return
	}
	s.report(&s.bodyErr, nil)
	if err := s.opts.Sink.Merge(ctx, podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.HTTPSource, Pods: pods}); err != nil && ctx.Err() == nil {
		s.log.Error(err, "The sink refused an update")
	}
}

// fetch GETs the URL with the configured headers, timeout and size bound.
func (s *HTTPSource) fetch(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	fail := func(reason manifest.Reason, format string, args ...any) error {
		return &manifest.ManifestError{Origin: s.origin, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.opts.URL, nil)
	if err != nil {
		return nil, fail(manifest.ReasonFetch, "%v", redactError(err))
	}
	req.Header = s.opts.Header.Clone()
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		return nil, fail(manifest.ReasonFetch, "%v", redactError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fail(manifest.ReasonFetch, "HTTP status %s", resp.Status)
	}
	limit := s.opts.MaxBodyBytes
	if resp.ContentLength > limit {
		return nil, fail(manifest.ReasonTooLarge, "Content-Length %d, the limit is %d", resp.ContentLength, limit)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fail(manifest.ReasonFetch, "reading the body: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, fail(manifest.ReasonTooLarge, "body longer than the limit of %d bytes", limit)
	}
	return data, nil
}

// report records err in *slot (nil clears it) and reports a new error once.
func (s *HTTPSource) report(slot *error, err error) {
	s.mu.Lock()
	prev := *slot
	*slot = err
	s.mu.Unlock()
	switch {
	case err == nil && prev != nil:
		s.log.Info("The manifest URL works again")
	case err != nil && (prev == nil || prev.Error() != err.Error()):
		reason := reasonOf(err)
		s.log.Error(err, "Manifest URL refused; keeping the pods last accepted", "reason", reason)
		s.opts.Recorder.Eventf(s.nodeRef, corev1.EventTypeWarning, eventReasonFailedValidation,
			"static pod URL refused, the pods last accepted are kept: %v", err)
		s.opts.Metrics.countRefused(podtypes.HTTPSource, reason)
	}
}
