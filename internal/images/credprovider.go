package images

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// CredentialProviderOptions configure NewCredentialProviders.
type CredentialProviderOptions struct {
	// ConfigPath is the CredentialProviderConfig file, or directory of
	// them (--image-credential-provider-config), BinDir the directory of the
	// plugins it names (--image-credential-provider-bin-dir).
	ConfigPath string
	BinDir     string
	// Timeout bounds one plugin run (default DefaultPluginTimeout).
	Timeout time.Duration
	Logger  logr.Logger
	Clock   clock.Clock
	// Metrics, if set, gets the kubelet's credential provider metrics.
	Metrics metrics.KubeRegistry
}

// ErrInvalidOptions is wrapped by NewCredentialProviders' error for
// options that cannot work.
var ErrInvalidOptions = errors.New("invalid credential provider options")

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field (and its flag); what the files
// hold is checked when they are read.
func (o CredentialProviderOptions) validate() error {
	var errs []error
	if o.ConfigPath == "" {
		errs = append(errs, fmt.Errorf("%w: ConfigPath (--image-credential-provider-config) is required", ErrInvalidOptions))
	}
	if o.BinDir == "" {
		errs = append(errs, fmt.Errorf("%w: BinDir (--image-credential-provider-bin-dir) is required", ErrInvalidOptions))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%w: Timeout is negative (%v)", ErrInvalidOptions, o.Timeout))
	}
	return errors.Join(errs...)
}

// CredentialProviders are the node's credential provider plugins, asked
// for the credentials of an image that their matchImages cover, their
// answers cached as each answer says. Safe for concurrent use; a nil
// *CredentialProviders has no plugin.
type CredentialProviders struct {
	log       logr.Logger
	clock     clock.Clock
	timeout   time.Duration
	metrics   *pluginMetrics
	providers []*pluginProvider
}

// pluginProvider is one configured plugin and the answers it gave.
type pluginProvider struct {
	cfg kubeletconfigv1.CredentialProvider
	bin string
	// patterns are cfg.MatchImages as keyring locations.
	patterns []string
	// runs: concurrent lookups of one image wait for one plugin run.
	runs singleflight.Group

	mu    sync.Mutex
	cache map[string]cachedAnswer // by cacheKey
}

// cachedAnswer is a plugin's auth map, as docker config entries, until
// expires.
type cachedAnswer struct {
	entries map[string]dockerEntry
	expires time.Time
}

// NewCredentialProviders reads and validates the config, and finds each
// plugin in the bin dir.
func NewCredentialProviders(opts CredentialProviderOptions) (*CredentialProviders, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultPluginTimeout
	}
	pc, err := readProviderConfig(opts.ConfigPath, opts.BinDir)
	if err != nil {
		return nil, err
	}
	m, err := newPluginMetrics(opts.Metrics, pc.hash)
	if err != nil {
		return nil, fmt.Errorf("the credential provider plugins' metrics: %w", err)
	}
	c := &CredentialProviders{log: opts.Logger, clock: opts.Clock, timeout: opts.Timeout, metrics: m}
	for _, cfg := range pc.providers {
		p := &pluginProvider{cfg: cfg, bin: pc.bins[cfg.Name], cache: map[string]cachedAnswer{}}
		for _, m := range cfg.MatchImages {
			key, _ := locationKey(m) // validated
			p.patterns = append(p.patterns, key)
		}
		c.providers = append(c.providers, p)
	}
	return c, nil
}

// Lookup returns the credentials the plugins give for repo (an image
// without tag or digest), matched as a Keyring matches: each plugin whose
// matchImages cover repo answers (from its cache, else by a run), and the
// locations of all the answers, earlier providers first within one, are
// looked up for repo. A plugin that fails is logged with its name and
// gives nothing: the pull goes on with the other credentials.
func (c *CredentialProviders) Lookup(ctx context.Context, repo string) []AuthConfig {
	if c == nil {
		return nil
	}
	kr := &Keyring{}
	for _, p := range c.providers {
		if !p.covers(repo) {
			continue
		}
		entries, err := c.answer(ctx, p, repo)
		if err != nil {
			c.log.Error(err, "Credential provider plugin failed; pulling with the other credentials", "provider", p.cfg.Name, "image", repo)
			continue
		}
		_ = kr.add(entries, nil) // username and password given: no auth to decode
	}
	return kr.Lookup(repo)
}

func (p *pluginProvider) covers(repo string) bool {
	for _, key := range p.patterns {
		if matches(key, repo) {
			return true
		}
	}
	return false
}

// answer is p's cached answer for repo, else a plugin run's, shared with
// the lookups of repo that come while it runs. The run outlives a caller
// that leaves (the others may still wait for it), up to its timeout.
func (c *CredentialProviders) answer(ctx context.Context, p *pluginProvider, repo string) (map[string]dockerEntry, error) {
	if entries, ok := p.cached(repo, c.clock.Now()); ok {
		return entries, nil
	}
	ch := p.runs.DoChan(repo, func() (any, error) {
		// A run that ended between the check above and this one filled
		// the cache: no second run.
		if entries, ok := p.cached(repo, c.clock.Now()); ok {
			return entries, nil
		}
		resp, err := execPlugin(context.WithoutCancel(ctx), p.bin, p.cfg, repo, c.timeout, c.metrics)
		if err != nil {
			return nil, err
		}
		return p.store(repo, resp, c.clock.Now()), nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(map[string]dockerEntry), nil
	}
}

// Cache keys by the answer's cacheKeyType: the image, its registry, or
// one for every image.
func imageCacheKey(repo string) string { return "image:" + repo }
func registryCacheKey(repo string) string {
	registry, _, _ := strings.Cut(repo, "/")
	return "registry:" + registry
}

const globalCacheKey = "global"

// cached looks for repo's answer as the kubelet does: under the image,
// then its registry, then the global key. Expired answers go.
func (p *pluginProvider) cached(repo string, now time.Time) (map[string]dockerEntry, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, a := range p.cache {
		if !now.Before(a.expires) {
			delete(p.cache, k)
		}
	}
	for _, k := range []string{imageCacheKey(repo), registryCacheKey(repo), globalCacheKey} {
		if a, ok := p.cache[k]; ok {
			return a.entries, true
		}
	}
	return nil, false
}

// store caches resp for its cacheDuration, else the provider's default;
// a duration of 0 caches nothing.
func (p *pluginProvider) store(repo string, resp *credentialproviderv1.CredentialProviderResponse, now time.Time) map[string]dockerEntry {
	entries := make(map[string]dockerEntry, len(resp.Auth))
	for loc, a := range resp.Auth {
		entries[loc] = dockerEntry{Username: a.Username, Password: a.Password}
	}
	ttl := p.cfg.DefaultCacheDuration.Duration
	if resp.CacheDuration != nil {
		ttl = resp.CacheDuration.Duration
	}
	if ttl <= 0 {
		return entries
	}
	var key string
	switch resp.CacheKeyType {
	case credentialproviderv1.ImagePluginCacheKeyType:
		key = imageCacheKey(repo)
	case credentialproviderv1.RegistryPluginCacheKeyType:
		key = registryCacheKey(repo)
	default: // Global; decodeResponse refused any other
		key = globalCacheKey
	}
	p.mu.Lock()
	p.cache[key] = cachedAnswer{entries: entries, expires: now.Add(ttl)}
	p.mu.Unlock()
	return entries
}

// String names the providers, for the agent's start log.
func (c *CredentialProviders) String() string {
	if c == nil {
		return "none"
	}
	names := make([]string, len(c.providers))
	for i, p := range c.providers {
		names[i] = fmt.Sprintf("%s (%s)", p.cfg.Name, strings.Join(p.cfg.MatchImages, ", "))
	}
	return strings.Join(names, "; ")
}
