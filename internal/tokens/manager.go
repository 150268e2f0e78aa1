package tokens

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

const (
	// requestTimeout bounds one TokenRequest. The request outlives the
	// caller that started it, since others may share it.
	requestTimeout = 30 * time.Second
	// retryDelay spaces refresh attempts while a cached token remains.
	retryDelay = 10 * time.Second
)

// Options configure a Manager. Client is required.
type Options struct {
	// Client carries the node's identity: the Node authorizer and
	// NodeRestriction decide which tokens it may have.
	Client  kubernetes.Interface
	Clock   clock.PassiveClock
	Logger  logr.Logger
	Metrics *Metrics
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid token manager options")

// Manager hands out pods' service account tokens. Its methods are safe for
// concurrent use.
type Manager struct {
	client  kubernetes.Interface
	clock   clock.PassiveClock
	log     logr.Logger
	metrics *Metrics
	flights singleflight.Group

	mu     sync.Mutex
	tokens map[types.UID]map[key]entry
	// inFlight counts requests under way per pod, and dropped the pods
	// deleted meanwhile, so that a request that ends after DeletePod does
	// not bring the pod's token back.
	inFlight map[types.UID]int
	dropped  map[types.UID]struct{}
}

// New returns a Manager.
func New(opts Options) (*Manager, error) {
	if opts.Client == nil {
		return nil, fmt.Errorf("%w: Client is required", ErrInvalidOptions)
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	return &Manager{
		client:   opts.Client,
		clock:    opts.Clock,
		log:      opts.Logger.WithName("tokens"),
		metrics:  opts.Metrics,
		tokens:   map[types.UID]map[key]entry{},
		inFlight: map[types.UID]int{},
		dropped:  map[types.UID]struct{}{},
	}, nil
}

// Token returns a token for pod's service account ("default" if it names
// none) with the audience and lifetime of p, bound to pod. A cached token
// is returned until it needs refreshing. An error wraps the apiserver's.
func (m *Manager) Token(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (string, error) {
	k, tr, err := request(pod, p)
	if err != nil {
		return "", err
	}
	if tok, ok := m.cached(k); ok {
		return tok, nil
	}
	ch := m.flights.DoChan(k.flight(), func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		defer cancel()
		return m.fetch(rctx, k, pod, tr)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		return "", fmt.Errorf("pod %s/%s: %s: waiting for a token: %w", pod.Namespace, pod.Name, k, ctx.Err())
	}
}

// cached returns k's token if it needs no request now: it is not due for
// refresh, or a refresh failed a moment ago and it is still valid.
func (m *Manager) cached(k key) (string, bool) {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.tokens[k.pod][k]
	if !ok || !now.Before(e.expires) || !now.Before(e.next()) {
		return "", false
	}
	return e.token, true
}

// fetch requests k's token, unless a request that ended since the caller
// looked has cached it.
func (m *Manager) fetch(ctx context.Context, k key, pod *corev1.Pod, tr *authenticationv1.TokenRequest) (string, error) {
	if tok, ok := m.cached(k); ok {
		return tok, nil
	}
	m.mu.Lock()
	m.inFlight[k.pod]++
	m.mu.Unlock()

	issued := m.clock.Now()
	got, err := m.createToken(ctx, k, tr)
	var e entry
	if err == nil {
		if e, err = accept(got, issued); err != nil {
			m.metrics.request("invalid")
		}
	} else if apierrors.IsForbidden(err) {
		m.metrics.request("forbidden")
		err = fmt.Errorf("the apiserver refused the node a token for it (a node may have tokens only for pods bound to it, for the audiences those pods name): %w", err)
	} else {
		m.metrics.request("error")
	}
	if err != nil {
		err = fmt.Errorf("pod %s/%s: %s: %w", pod.Namespace, pod.Name, k, err)
	} else {
		m.metrics.request("ok")
	}

	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	_, dropped := m.dropped[k.pod]
	if m.inFlight[k.pod]--; m.inFlight[k.pod] == 0 {
		delete(m.inFlight, k.pod)
		delete(m.dropped, k.pod)
	}
	if dropped {
		return e.token, err
	}
	if err == nil {
		m.store(k, e)
		return e.token, nil
	}
	old, ok := m.tokens[k.pod][k]
	if !ok || !now.Before(old.expires) {
		return "", err
	}
	old.retryAt = now.Add(retryDelay)
	m.store(k, old)
	m.metrics.keptCached()
	m.log.Error(err, "Refreshing a service account token failed; the cached one is used until it expires",
		"pod", pod.Namespace+"/"+pod.Name, "expires", old.expires, "retryAt", old.retryAt)
	return old.token, nil
}

// store caches e under k; m.mu is held.
func (m *Manager) store(k key, e entry) {
	byKey := m.tokens[k.pod]
	if byKey == nil {
		byKey = map[key]entry{}
		m.tokens[k.pod] = byKey
	}
	byKey[k] = e
}

// NextRefresh returns when the earliest of the pod's cached tokens should
// be asked for again (the agent syncs the pod then, to rewrite its token
// files), and false if the pod has none.
func (m *Manager) NextRefresh(uid types.UID) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var first time.Time
	for _, e := range m.tokens[uid] {
		if n := e.next(); first.IsZero() || n.Before(first) {
			first = n
		}
	}
	return first, !first.IsZero()
}

// DeletePod forgets the pod's tokens; call it once the pod is gone.
func (m *Manager) DeletePod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tokens, uid)
	if m.inFlight[uid] > 0 {
		m.dropped[uid] = struct{}{}
	}
}
