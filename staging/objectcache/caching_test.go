package objectcache

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	testingclock "k8s.io/utils/clock/testing"
)

func newCaching(t *testing.T, api *fakeAPI, clk *testingclock.FakeClock, opts CachingOptions) *CachingManager[*corev1.ConfigMap] {
	t.Helper()
	opts.Client, opts.Clock = api, clk
	m, err := NewCaching(ConfigMaps(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func update(t *testing.T, api *fakeAPI, cm *corev1.ConfigMap) {
	t.Helper()
	if _, err := api.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestCachingServesForTheTTLThenReadsAgain(t *testing.T) {
	nodeTTL := func(d time.Duration) func() (time.Duration, bool) {
		return func() (time.Duration, bool) { return d, true }
	}
	tests := []struct {
		name   string
		opts   CachingOptions
		fresh  time.Duration // still served from the cache after this long
		expiry time.Duration // read again after this long
	}{
		{name: "default TTL", fresh: time.Minute - time.Nanosecond, expiry: time.Minute},
		{name: "TTL option", opts: CachingOptions{TTL: 10 * time.Second}, fresh: 9 * time.Second, expiry: 10 * time.Second},
		{name: "node TTL overrides", opts: CachingOptions{TTL: time.Hour, NodeTTL: nodeTTL(30 * time.Second)}, fresh: 29 * time.Second, expiry: 30 * time.Second},
		{name: "node TTL zero reads every time", opts: CachingOptions{NodeTTL: nodeTTL(0)}, fresh: -1, expiry: 0},
		{name: "node without TTL", opts: CachingOptions{NodeTTL: func() (time.Duration, bool) { return 0, false }}, fresh: 59 * time.Second, expiry: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(configMap("a", "1", "v1"))
			clk := newClock()
			start := clk.Now()
			m := newCaching(t, api, clk, tt.opts)
			m.RegisterPod(podWithConfigMaps("p", "a"))
			if got := mustGet(t, m.Get, "a"); got.Data["k"] != "v1" {
				t.Fatalf("first Get = %v", got.Data)
			}
			if diff := cmp.Diff([]string{"a@"}, api.takeGets()); diff != "" {
				t.Errorf("first read is not one consistent get (-want +got):\n%s", diff)
			}
			update(t, api, configMap("a", "2", "v2"))
			if tt.fresh >= 0 {
				clk.SetTime(start.Add(tt.fresh))
				if got := mustGet(t, m.Get, "a"); got.Data["k"] != "v1" {
					t.Errorf("after %v: %v, want the cached v1", tt.fresh, got.Data)
				}
			}
			clk.SetTime(start.Add(tt.expiry))
			if got := mustGet(t, m.Get, "a"); got.Data["k"] != "v2" {
				t.Errorf("after %v: %v, want v2", tt.expiry, got.Data)
			}
			// A periodic refresh of a copy we hold may be served from
			// the apiserver's watch cache.
			if diff := cmp.Diff([]string{"a@0"}, api.takeGets()); diff != "" {
				t.Errorf("refresh reads (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCachingInvalidatesWhenAReferencingPodIsRegistered(t *testing.T) {
	api := newFakeAPI(configMap("a", "1", "v1"))
	clk := newClock()
	m := newCaching(t, api, clk, CachingOptions{})
	p1 := podWithConfigMaps("p1", "a")
	m.RegisterPod(p1)
	mustGet(t, m.Get, "a")

	steps := []struct {
		name      string
		do        func()
		write     string // the object's value before the step
		want      string // what Get returns after it
		wantReads []string
	}{
		{"re-register p1", func() { m.RegisterPod(p1) }, "v2", "v2", []string{"a@"}},
		{"register p2, also referencing a", func() { m.RegisterPod(podWithConfigMaps("p2", "a")) }, "v3", "v3", []string{"a@"}},
		{"register p3, referencing b only", func() { m.RegisterPod(podWithConfigMaps("p3", "b")) }, "v4", "v3", nil},
		{"unregister p2", func() { m.UnregisterPod(podWithConfigMaps("p2", "a")) }, "v5", "v3", nil},
	}
	for _, step := range steps {
		update(t, api, configMap("a", "2", step.write))
		api.takeGets()
		step.do()
		if got := mustGet(t, m.Get, "a"); got.Data["k"] != step.want {
			t.Errorf("after %s: %v, want %s", step.name, got.Data, step.want)
		}
		// An invalidated object is read consistently ("a@", not "a@0").
		if diff := cmp.Diff(step.wantReads, api.takeGets()); diff != "" {
			t.Errorf("after %s, reads (-want +got):\n%s", step.name, diff)
		}
	}
}

func TestCachingCachesNotFound(t *testing.T) {
	api := newFakeAPI()
	clk := newClock()
	m := newCaching(t, api, clk, CachingOptions{})
	m.RegisterPod(podWithConfigMaps("p", "later"))
	for range 2 {
		if _, err := m.Get(context.Background(), ns, "later"); !apierrors.IsNotFound(err) {
			t.Fatalf("Get = %v, want the apiserver's NotFound", err)
		}
		if _, err := api.CoreV1().ConfigMaps(ns).Create(context.Background(), configMap("later", "", "here"), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if got := api.takeGets(); len(got) != 1 {
		t.Errorf("reads = %v, want one: NotFound is cached", got)
	}
	clk.Step(time.Minute)
	if got := mustGet(t, m.Get, "later"); got.Data["k"] != "here" {
		t.Errorf("after the TTL: %v, want here", got.Data)
	}
}

func TestCachingReadErrors(t *testing.T) {
	api := newFakeAPI(configMap("a", "10", "v1"))
	clk := newClock()
	m := newCaching(t, api, clk, CachingOptions{})
	m.RegisterPod(podWithConfigMaps("p", "a"))
	boom := apierrors.NewInternalError(errors.New("etcd hiccup"))
	failing := func(string, string) (runtime.Object, error) { return nil, boom }

	// Nothing held: the error is returned, and not cached.
	api.setGetFn(failing)
	for range 2 {
		_, err := m.Get(context.Background(), ns, "a")
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "configmaps default/a") {
			t.Fatalf("Get = %v, want the internal error naming the object", err)
		}
	}
	api.setGetFn(nil)
	mustGet(t, m.Get, "a")

	// A failed refresh serves the copy held, and is retried next time.
	clk.Step(time.Minute)
	api.setGetFn(failing)
	if got := mustGet(t, m.Get, "a"); got.ResourceVersion != "10" {
		t.Errorf("Get during a failed refresh = rv %s, want the held rv 10", got.ResourceVersion)
	}
	// A watch cache that lags behind what we hold does not roll us back.
	api.setGetFn(func(string, string) (runtime.Object, error) { return configMap("a", "9", "old"), nil })
	if got := mustGet(t, m.Get, "a"); got.ResourceVersion != "10" {
		t.Errorf("Get with a lagging watch cache = rv %s, want 10", got.ResourceVersion)
	}
	api.setGetFn(func(string, string) (runtime.Object, error) { return configMap("a", "11", "new"), nil })
	if got := mustGet(t, m.Get, "a"); got.ResourceVersion != "11" {
		t.Errorf("Get after recovery = rv %s, want 11", got.ResourceVersion)
	}
	if got := api.takeGets(); len(got) != 6 {
		t.Errorf("reads = %v, want 6: failures and stale answers are not cached", got)
	}
}

func TestCachingForgetsUnreferencedObjects(t *testing.T) {
	api := newFakeAPI(configMap("a", "1", "v1"), configMap("b", "1", "v1"))
	m := newCaching(t, api, newClock(), CachingOptions{})
	p1, p2 := podWithConfigMaps("p1", "a"), podWithConfigMaps("p2", "a")
	m.RegisterPod(p1)
	m.RegisterPod(p2)
	m.UnregisterPod(p1)
	mustGet(t, m.Get, "a")
	m.UnregisterPod(p2)
	if _, err := m.Get(context.Background(), ns, "a"); !errors.Is(err, ErrNotRegistered) || !strings.Contains(err.Error(), "default/a") {
		t.Errorf("Get after the last pod left = %v, want ErrNotRegistered naming the object", err)
	}
	m.RegisterPod(podWithConfigMaps("p1", "b"))
	mustGet(t, m.Get, "b")
	if _, err := m.Get(context.Background(), ns, "a"); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("Get(a) = %v, want ErrNotRegistered", err)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	api := newFakeAPI()
	errs := map[string]error{}
	_, errs["caching: no client"] = NewCaching(ConfigMaps(), CachingOptions{})
	_, errs["caching: zero kind"] = NewCaching(Kind[*corev1.ConfigMap]{}, CachingOptions{Client: api})
	_, errs["caching: negative TTL"] = NewCaching(Secrets(), CachingOptions{Client: api, TTL: -time.Second})
	_, errs["watching: no client"] = NewWatching(ConfigMaps(), WatchingOptions{})
	_, errs["watching: zero kind"] = NewWatching(Kind[*corev1.Secret]{}, WatchingOptions{Client: api})
	_, errs["watching: negative MaxIdle"] = NewWatching(Secrets(), WatchingOptions{Client: api, MaxIdle: -1})
	for name, err := range errs {
		if !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", name, err)
		}
	}
}

func TestEveryInvalidOptionIsReportedAtOnce(t *testing.T) {
	_, cerr := NewCaching(Kind[*corev1.ConfigMap]{}, CachingOptions{TTL: -time.Second})
	_, werr := NewWatching(Kind[*corev1.Secret]{}, WatchingOptions{SyncTimeout: -time.Second, RetryMax: -time.Second})
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{cerr, []string{"use ConfigMaps() or Secrets()", "Client is required", "TTL is negative"}},
		{werr, []string{"use ConfigMaps() or Secrets()", "Client is required", "SyncTimeout is negative", "RetryMax is negative"}},
	} {
		if !errors.Is(tc.err, ErrInvalidOptions) {
			t.Errorf("%v, want ErrInvalidOptions", tc.err)
		}
		for _, want := range tc.want {
			if tc.err == nil || !strings.Contains(tc.err.Error(), want) {
				t.Errorf("%v, want it to say %q", tc.err, want)
			}
		}
	}
}

func TestTTLFromNode(t *testing.T) {
	node := func(v string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{NodeTTLAnnotationKey: v}}}
	}
	tests := []struct {
		name   string
		node   *corev1.Node
		want   time.Duration
		wantOK bool
	}{
		{"no node", nil, 0, false},
		{"no annotation", &corev1.Node{}, 0, false},
		{"seconds", node("15"), 15 * time.Second, true},
		{"zero", node("0"), 0, true},
		{"negative", node("-1"), 0, false},
		{"not a number", node("1m"), 0, false},
	}
	for _, tt := range tests {
		got, ok := TTLFromNode(tt.node)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: TTLFromNode = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}
