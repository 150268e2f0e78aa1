package integration

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodeagent/nodeagent/staging/objectcache"
	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// The objectcache tests run the managers as the node's identity, so the
// Node authorizer decides what they may read: only ConfigMaps and Secrets
// referenced by pods bound to this node. The admin creates those pods (no
// scheduler or kubelet runs, so they stay Pending) and the objects.

// ocFixture holds what one test created; everything is deleted at the end.
type ocFixture struct {
	suffix      string
	admin, node kubernetes.Interface // without the default 5 QPS client limit
	// probe asks as the node whether the Node authorizer lets it read an
	// object yet: its 403s are expected, and declared so to the run's check.
	probe kubernetes.Interface
	pods  []*corev1.Pod
	// nodeWatches counts the WATCH requests the node client sent: exact,
	// unlike the apiserver's totals, which its own informers also move.
	nodeWatches atomic.Int64
}

func newOCFixture(t testing.TB) *ocFixture {
	t.Helper()
	f := &ocFixture{
		suffix: strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36),
		// The admin is unlimited; the node gets the kubelet's defaults.
		admin: ocClient(t, env.AdminConfig, -1, 0, nil),
	}
	f.node = ocClient(t, env.NodeConfig, 50, 100, &f.nodeWatches)
	f.probe = ocClient(t, framework.ExpectForbidden(env.NodeConfig), 50, 100, nil)
	t.Cleanup(func() {
		ctx := context.Background()
		force := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
		for _, p := range f.pods {
			_ = f.admin.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, force)
			for _, n := range objectcache.ConfigMapNames(p) {
				_ = f.admin.CoreV1().ConfigMaps(p.Namespace).Delete(ctx, n, metav1.DeleteOptions{})
			}
			for _, n := range objectcache.SecretNames(p) {
				_ = f.admin.CoreV1().Secrets(p.Namespace).Delete(ctx, n, metav1.DeleteOptions{})
			}
		}
	})
	return f
}

func (f *ocFixture) name(s string) string { return "oc-" + f.suffix + "-" + s }

func (f *ocFixture) configMap(ctx context.Context, t testing.TB, name, value string, immutable bool) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: f.name(name), Namespace: metav1.NamespaceDefault}, Data: map[string]string{"k": value}}
	if immutable {
		cm.Immutable = new(true)
	}
	if _, err := f.admin.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (f *ocFixture) secret(ctx context.Context, t testing.TB, name, value string, immutable bool) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.name(name), Namespace: metav1.NamespaceDefault}, Data: map[string][]byte{"k": []byte(value)}}
	if immutable {
		s.Immutable = new(true)
	}
	if _, err := f.admin.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pod binds a pod to the node and waits until the node may read every
// object it references (the Node authorizer learns of pods from a watch).
func (f *ocFixture) pod(ctx context.Context, t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	pod.Name, pod.Namespace, pod.Spec.NodeName = f.name(pod.Name), metav1.NamespaceDefault, env.NodeName
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "main", Image: env.BusyboxImage})
	// No token volume from the ServiceAccount admission: its
	// kube-root-ca.crt would be one more object to count.
	pod.Spec.AutomountServiceAccountToken = new(false)
	created, err := f.admin.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.pods = append(f.pods, created)
	for _, n := range objectcache.ConfigMapNames(created) {
		ocWaitReadable(ctx, t, func() error {
			_, err := f.probe.CoreV1().ConfigMaps(created.Namespace).Get(ctx, n, metav1.GetOptions{})
			return err
		})
	}
	for _, n := range objectcache.SecretNames(created) {
		ocWaitReadable(ctx, t, func() error {
			_, err := f.probe.CoreV1().Secrets(created.Namespace).Get(ctx, n, metav1.GetOptions{})
			return err
		})
	}
	return created
}

func ocWaitReadable(ctx context.Context, t testing.TB, get func() error) {
	t.Helper()
	for {
		err := get()
		if err == nil || apierrors.IsNotFound(err) {
			return
		}
		if !apierrors.IsForbidden(err) || ctx.Err() != nil {
			t.Fatalf("the node cannot read an object its pod references: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ocVolume(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

func ocRef(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

// ocRunWatching runs a watching manager as the node until the test ends.
func ocRunWatching[T objectcache.Object](t testing.TB, f *ocFixture, kind objectcache.Kind[T]) *objectcache.WatchingManager[T] {
	t.Helper()
	m, err := objectcache.NewWatching(kind, objectcache.WatchingOptions{Client: f.node, SyncTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	return m
}

// ocCounts counts requests on ConfigMaps and Secrets, as the apiserver
// reports them on /metrics.
type ocCounts struct{ ConfigMaps, Secrets int }

func (c ocCounts) minus(o ocCounts) ocCounts {
	return ocCounts{c.ConfigMaps - o.ConfigMaps, c.Secrets - o.Secrets}
}

// within reports whether c is want, or exceeds it by at most slack per kind.
func (c ocCounts) within(want ocCounts, slack int) bool {
	return c.ConfigMaps >= want.ConfigMaps && c.ConfigMaps <= want.ConfigMaps+slack &&
		c.Secrets >= want.Secrets && c.Secrets <= want.Secrets+slack
}

// ocServerSide is what the apiserver's own metrics say about the watches and
// lists on ConfigMaps and Secrets: WATCH requests open now
// (apiserver_longrunning_requests), and WATCH and LIST requests completed
// since it started (apiserver_request_total; a watch completes when it is
// closed). The apiserver's own informers contribute a constant baseline.
type ocServerSide struct{ Open, WatchesEnded, Lists ocCounts }

func (f *ocFixture) server(ctx context.Context, t testing.TB) ocServerSide {
	t.Helper()
	raw, err := f.admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("reading the apiserver's metrics: %v", err)
	}
	var s ocServerSide
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var c *ocCounts
		switch {
		case strings.HasPrefix(line, "apiserver_longrunning_requests{") && strings.Contains(line, `verb="WATCH"`):
			c = &s.Open
		case strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `verb="WATCH"`):
			c = &s.WatchesEnded
		case strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `verb="LIST"`):
			c = &s.Lists
		default:
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		switch {
		case strings.Contains(line, `resource="configmaps"`):
			c.ConfigMaps += int(v)
		case strings.Contains(line, `resource="secrets"`):
			c.Secrets += int(v)
		}
	}
	return s
}

func ocClient(t testing.TB, cfg *rest.Config, qps float32, burst int, watches *atomic.Int64) kubernetes.Interface {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = qps, burst
	if watches != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return ocRoundTripperFunc(func(req *http.Request) (*http.Response, error) {
				if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
					watches.Add(1)
				}
				return rt.RoundTrip(req)
			})
		})
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

type ocRoundTripperFunc func(*http.Request) (*http.Response, error)

func (f ocRoundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestObjectCacheWatchCountsMatchTheApiserver proves from the apiserver's
// side that the node opens one watch per distinct mutable object its pods
// reference, none for immutable ones, and closes each with its last pod.
func TestObjectCacheWatchCountsMatchTheApiserver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newOCFixture(t)
	for _, n := range []string{"cm-a", "cm-shared", "cm-b"} {
		f.configMap(ctx, t, n, "v1", false)
	}
	for _, n := range []string{"cm-frozen-a", "cm-frozen-b"} {
		f.configMap(ctx, t, n, "v1", true)
	}
	f.secret(ctx, t, "s-a", "v1", false)
	f.secret(ctx, t, "s-b", "v1", false)
	f.secret(ctx, t, "s-frozen", "v1", true)
	n := f.name
	podA := f.pod(ctx, t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-a"},
		Spec: corev1.PodSpec{
			ImagePullSecrets: []corev1.LocalObjectReference{ocRef(n("s-frozen"))},
			InitContainers: []corev1.Container{{Name: "init", Image: env.BusyboxImage,
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ocRef(n("cm-shared"))}}},
				Env: []corev1.EnvVar{{Name: "F", ValueFrom: &corev1.EnvVarSource{
					ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ocRef(n("cm-frozen-a")), Key: "k"}}}},
			}},
			Volumes: []corev1.Volume{
				ocVolume("a", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ocRef(n("cm-a"))}}),
				ocVolume("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n("s-a")}}),
			},
		},
	})
	podB := f.pod(ctx, t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-b"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "side", Image: env.BusyboxImage,
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ocRef(n("cm-frozen-b"))}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ocRef(n("s-b"))}},
				},
			}},
			Volumes: []corev1.Volume{
				ocVolume("b", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ocRef(n("cm-b"))}}),
				ocVolume("missing", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ocRef(n("cm-missing")), Optional: new(true)}}),
				ocVolume("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ocRef(n("cm-shared"))}},
					{Secret: &corev1.SecretProjection{LocalObjectReference: ocRef(n("s-a"))}},
				}}}),
			},
		},
	})

	before := f.server(ctx, t)
	t.Logf("apiserver before: %+v", before)
	cms, secrets := ocRunWatching(t, f, objectcache.ConfigMaps()), ocRunWatching(t, f, objectcache.Secrets())

	// expect checks both sides: our count, and the WATCH requests the
	// apiserver holds open above its baseline.
	expect := func(step string, want ocCounts) {
		t.Helper()
		if ours := (ocCounts{cms.ActiveWatches(), secrets.ActiveWatches()}); ours != want {
			t.Errorf("%s: ActiveWatches = %+v, want %+v", step, ours, want)
		}
		var open ocCounts
		for deadline := time.Now().Add(10 * time.Second); ctx.Err() == nil && time.Now().Before(deadline); {
			if open = f.server(ctx, t).Open.minus(before.Open); open == want {
				t.Logf("%s: the apiserver holds %+v watches for the node", step, open)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The baseline is the controller-manager's informers, whose
		// watches end every 5 to 10 minutes and are opened again: one
		// caught between the two when the baseline was read leaves the
		// count one over for the rest of the test. Our own count above is
		// exact.
		if !open.within(want, 1) {
			t.Fatalf("%s: the apiserver holds %+v watches for the node, want %+v", step, open, want)
		}
		t.Logf("%s: the apiserver holds %+v watches, want %+v: a baseline watch was being reopened when the baseline was read", step, open, want)
	}
	getAll := func(pod *corev1.Pod) {
		t.Helper()
		for _, name := range objectcache.ConfigMapNames(pod) {
			cm, err := cms.Get(ctx, pod.Namespace, name)
			switch {
			case name == n("cm-missing"):
				if !apierrors.IsNotFound(err) {
					t.Errorf("Get of a referenced but missing ConfigMap = %v, want NotFound", err)
				}
			case err != nil || cm.Data["k"] != "v1":
				t.Errorf("ConfigMap %s = %v, %v; want v1", name, cm, err)
			}
		}
		for _, name := range objectcache.SecretNames(pod) {
			if s, err := secrets.Get(ctx, pod.Namespace, name); err != nil || string(s.Data["k"]) != "v1" {
				t.Errorf("Secret %s = %v, %v; want v1", name, s, err)
			}
		}
	}

	for _, pod := range []*corev1.Pod{podA, podB} {
		cms.RegisterPod(pod)
		secrets.RegisterPod(pod)
	}
	getAll(podA)
	getAll(podB)
	// Mutable: cm-a, cm-shared, cm-b, cm-missing (it may appear); s-a,
	// s-b. Immutable, never watched: cm-frozen-a, cm-frozen-b, s-frozen.
	expect("both pods registered", ocCounts{ConfigMaps: 4, Secrets: 2})

	cms.RegisterPod(podB) // a pod update with the same references: no churn
	secrets.RegisterPod(podB)
	getAll(podB)
	expect("pod-b registered again", ocCounts{ConfigMaps: 4, Secrets: 2})

	cms.UnregisterPod(podA)
	secrets.UnregisterPod(podA)
	expect("pod-a gone (cm-shared and s-a stay for pod-b)", ocCounts{ConfigMaps: 3, Secrets: 2})

	cms.UnregisterPod(podB)
	secrets.UnregisterPod(podB)
	expect("the last pod gone", ocCounts{})

	// Over the whole test, every object was listed exactly once (immutable
	// ones included: read once) and exactly one watch was opened, and has
	// now ended, per mutable object: none for immutable ones, no churn.
	after := f.server(ctx, t)
	t.Logf("apiserver after: %+v", after)
	// The apiserver's own informers may re-list or re-watch once in the
	// meantime (their watches end every 5 to 10 minutes), so its totals may
	// exceed ours by one per resource; the node client's count is exact.
	if got, want := after.Lists.minus(before.Lists), (ocCounts{ConfigMaps: 6, Secrets: 3}); !got.within(want, 1) {
		t.Errorf("the apiserver served %+v lists, want %+v", got, want)
	}
	if got, want := after.WatchesEnded.minus(before.WatchesEnded), (ocCounts{ConfigMaps: 4, Secrets: 2}); !got.within(want, 1) {
		t.Errorf("the apiserver served %+v watches in all, want %+v", got, want)
	}
	if got := f.nodeWatches.Load(); got != 6 {
		t.Errorf("the node client opened %d watches, want 6 (one per mutable object)", got)
	}
}

// TestObjectCacheEveryUpdateIsVisible updates, deletes and re-creates
// referenced objects through the admin and waits for Get to show each
// change.
func TestObjectCacheEveryUpdateIsVisible(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newOCFixture(t)
	f.configMap(ctx, t, "live", "0", false)
	f.secret(ctx, t, "live", "0", false)
	pod := f.pod(ctx, t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "live"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			ocVolume("cm", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ocRef(f.name("live"))}}),
			ocVolume("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: f.name("live")}}),
		}},
	})
	cms, secrets := ocRunWatching(t, f, objectcache.ConfigMaps()), ocRunWatching(t, f, objectcache.Secrets())
	cms.RegisterPod(pod)
	secrets.RegisterPod(pod)
	name := f.name("live")

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("never visible: %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := 1; i <= 100; i++ {
		v := strconv.Itoa(i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace}, Data: map[string]string{"k": v}}
		if _, err := f.admin.CoreV1().ConfigMaps(pod.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor("ConfigMap update "+v, func() bool {
			got, err := cms.Get(ctx, pod.Namespace, name)
			return err == nil && got.Data["k"] == v
		})
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace}, Data: map[string][]byte{"k": []byte("1")}}
	if _, err := f.admin.CoreV1().Secrets(pod.Namespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("Secret update", func() bool {
		got, err := secrets.Get(ctx, pod.Namespace, name)
		return err == nil && string(got.Data["k"]) == "1"
	})

	// Deleted: NotFound; created again: visible again.
	if err := f.admin.CoreV1().ConfigMaps(pod.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("ConfigMap deletion", func() bool {
		_, err := cms.Get(ctx, pod.Namespace, name)
		return apierrors.IsNotFound(err)
	})
	f.configMap(ctx, t, "live", "reborn", false)
	waitFor("ConfigMap re-creation", func() bool {
		got, err := cms.Get(ctx, pod.Namespace, name)
		return err == nil && got.Data["k"] == "reborn"
	})
	if a, b := cms.ActiveWatches(), secrets.ActiveWatches(); a != 1 || b != 1 {
		t.Errorf("ActiveWatches = %d, %d; want one each throughout", a, b)
	}
}

// TestObjectCacheCachingManager runs the TTL strategy as the node: no
// watch, reads on demand, invalidation when the pod is registered again.
func TestObjectCacheCachingManager(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newOCFixture(t)
	f.configMap(ctx, t, "ttl", "v1", false)
	pod := f.pod(ctx, t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ttl"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			ocVolume("cm", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ocRef(f.name("ttl"))}}),
		}},
	})
	m, err := objectcache.NewCaching(objectcache.ConfigMaps(), objectcache.CachingOptions{Client: f.node, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	m.RegisterPod(pod)
	get := func() string {
		t.Helper()
		cm, err := m.Get(ctx, pod.Namespace, f.name("ttl"))
		if err != nil {
			t.Fatalf("Get as the node: %v", err)
		}
		return cm.Data["k"]
	}
	if v := get(); v != "v1" {
		t.Fatalf("Get = %q, want v1", v)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: f.name("ttl"), Namespace: pod.Namespace}, Data: map[string]string{"k": "v2"}}
	if _, err := f.admin.CoreV1().ConfigMaps(pod.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := get(); v != "v1" {
		t.Errorf("Get within the TTL = %q, want the cached v1", v)
	}
	m.RegisterPod(pod)
	if v := get(); v != "v2" {
		t.Errorf("Get after re-registration = %q, want v2", v)
	}
	if n := f.nodeWatches.Load(); n != 0 {
		t.Errorf("the caching strategy opened %d watches, want none", n)
	}
}

// BenchmarkObjectCachePropagation measures, per update, the time from the
// admin sending a write to the node's watching manager returning the new
// value (Get polled every 100µs), and the part of it after the apiserver
// acknowledged the write. Run it with -benchtime 100x for 100 updates; it
// reports the p50 and p99 of those.
func BenchmarkObjectCachePropagation(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f := newOCFixture(b)
	f.configMap(ctx, b, "bench", "0", false)
	pod := f.pod(ctx, b, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			ocVolume("cm", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ocRef(f.name("bench"))}}),
		}},
	})
	m := ocRunWatching(b, f, objectcache.ConfigMaps())
	m.RegisterPod(pod)
	name := f.name("bench")
	if _, err := m.Get(ctx, pod.Namespace, name); err != nil {
		b.Fatal(err)
	}
	var delays, afterAck []time.Duration
	i := 0
	for b.Loop() {
		i++
		v := strconv.Itoa(i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace}, Data: map[string]string{"k": v}}
		start := time.Now()
		if _, err := f.admin.CoreV1().ConfigMaps(pod.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
		acked := time.Now()
		for {
			got, err := m.Get(ctx, pod.Namespace, name)
			if err == nil && got.Data["k"] == v {
				break
			}
			if ctx.Err() != nil {
				b.Fatalf("update %s never became visible", v)
			}
			time.Sleep(100 * time.Microsecond)
		}
		delays, afterAck = append(delays, time.Since(start)), append(afterAck, time.Since(acked))
	}
	ms := func(d []time.Duration, p float64) float64 { // nearest rank
		slices.Sort(d)
		rank := int(math.Ceil(p * float64(len(d))))
		return float64(d[max(rank-1, 0)].Microseconds()) / 1000
	}
	b.ReportMetric(ms(delays, 0.50), "p50-ms")
	b.ReportMetric(ms(delays, 0.99), "p99-ms")
	b.ReportMetric(ms(afterAck, 0.50), "p50-after-ack-ms")
	b.ReportMetric(ms(afterAck, 0.99), "p99-after-ack-ms")
	b.Logf("propagation over %d updates: p50 %.2fms, p99 %.2fms, max %.2fms (after the write's ack: p50 %.2fms, p99 %.2fms)",
		len(delays), ms(delays, 0.5), ms(delays, 0.99), ms(delays, 1), ms(afterAck, 0.5), ms(afterAck, 0.99))
}
