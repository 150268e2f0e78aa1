package tokens

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

func TestFirstRequestIsBoundToThePod(t *testing.T) {
	f := newFixture(t)
	pod := testPod("web", "builder")
	if tok := f.token(t, pod, projection("vault", 7200)); tok != "token-1" {
		t.Fatalf("Token = %q, want the apiserver's token-1", tok)
	}
	want := []call{{
		namespace: "apps", serviceAccount: "builder",
		spec: authenticationv1.TokenRequestSpec{
			Audiences:         []string{"vault"},
			ExpirationSeconds: new(int64(7200)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web", UID: "web-uid"},
		},
	}}
	if diff := cmp.Diff(want, f.requests(), cmp.AllowUnexported(call{})); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	f := newFixture(t)
	f.token(t, testPod("web", ""), projection("", 0))
	got := f.requests()[0]
	if got.serviceAccount != "default" {
		t.Errorf("service account = %q, want default for a pod that names none", got.serviceAccount)
	}
	if got.spec.Audiences != nil {
		t.Errorf("audiences = %q, want none (the apiserver's own)", got.spec.Audiences)
	}
	if got.spec.ExpirationSeconds == nil || *got.spec.ExpirationSeconds != 3600 {
		t.Errorf("expirationSeconds = %v, want the API's default 3600", got.spec.ExpirationSeconds)
	}
}

func TestRefusedBeforeAnyRequest(t *testing.T) {
	pod := testPod("web", "builder")
	noUID := testPod("web", "builder")
	noUID.UID = ""
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		p    *corev1.ServiceAccountTokenProjection
		want string
	}{
		{"short lifetime", pod, projection("", 599), `serviceAccountToken "token": expirationSeconds 599 is below the minimum of 600`},
		{"no pod", nil, projection("", 0), "no pod"},
		{"no projection", pod, nil, "no projection"},
		{"no UID", noUID, projection("", 0), "needs a namespace, a name and a UID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := f.m.Token(t.Context(), tc.pod, tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Token error = %v, want one saying %q", err, tc.want)
			}
			f.wantRequests(t, 0)
		})
	}
	f := newFixture(t)
	f.token(t, pod, projection("", 600)) // the minimum itself is fine
}

func TestCachedPerPodServiceAccountAudienceAndLifetime(t *testing.T) {
	f := newFixture(t)
	web, db := testPod("web", "builder"), testPod("db", "builder")
	asks := []struct {
		pod *corev1.Pod
		p   *corev1.ServiceAccountTokenProjection
	}{
		{web, projection("vault", 3600)},
		{web, projection("", 3600)},
		{web, projection("vault", 7200)},
		{db, projection("vault", 3600)},
	}
	first := map[int]string{}
	for i, a := range asks {
		first[i] = f.token(t, a.pod, a.p)
	}
	f.wantRequests(t, len(asks))
	for i, a := range asks {
		if tok := f.token(t, a.pod, a.p); tok != first[i] {
			t.Errorf("ask %d again = %q, want the cached %q", i, tok, first[i])
		}
	}
	f.wantRequests(t, len(asks))
}

func TestRefreshAtEightyPercent(t *testing.T) {
	f := newFixture(t)
	pod, p := testPod("web", "builder"), projection("", 3600)
	f.token(t, pod, p)
	if at, ok := f.m.NextRefresh(pod.UID); !ok || !at.Equal(t0.Add(48*time.Minute)) {
		t.Fatalf("NextRefresh = %v, %v; want 80%% of an hour after issue, %v", at, ok, t0.Add(48*time.Minute))
	}
	f.clock.Step(48*time.Minute - time.Second)
	if tok := f.token(t, pod, p); tok != "token-1" {
		t.Fatalf("just before 80%%: Token = %q, want the cached token-1", tok)
	}
	f.clock.Step(time.Second)
	if tok := f.token(t, pod, p); tok != "token-2" {
		t.Fatalf("at 80%%: Token = %q, want a new token-2", tok)
	}
	if at, _ := f.m.NextRefresh(pod.UID); !at.Equal(f.clock.Now().Add(48 * time.Minute)) {
		t.Errorf("NextRefresh after the refresh = %v, want %v", at, f.clock.Now().Add(48*time.Minute))
	}
}

func TestRefreshAfterADayWhateverTheLifetime(t *testing.T) {
	f := newFixture(t)
	pod, p := testPod("web", "builder"), projection("", 7*24*3600)
	f.token(t, pod, p)
	if at, _ := f.m.NextRefresh(pod.UID); !at.Equal(t0.Add(24 * time.Hour)) {
		t.Fatalf("NextRefresh = %v, want a day after issue, %v", at, t0.Add(24*time.Hour))
	}
	f.clock.Step(24*time.Hour - time.Second)
	if tok := f.token(t, pod, p); tok != "token-1" {
		t.Fatalf("just before 24 h: Token = %q, want the cached token-1", tok)
	}
	f.clock.Step(time.Second)
	if tok := f.token(t, pod, p); tok != "token-2" {
		t.Fatalf("at 24 h: Token = %q, want a new token-2", tok)
	}
}

func TestFailedRefreshKeepsTheValidTokenThenFails(t *testing.T) {
	f := newFixture(t)
	pod, p := testPod("web", "builder"), projection("", 3600)
	f.token(t, pod, p)

	down := apierrors.NewServiceUnavailable("etcd is away")
	f.set(func(f *fixture) { f.fail = down })
	f.clock.Step(48 * time.Minute)
	if tok := f.token(t, pod, p); tok != "token-1" {
		t.Fatalf("failed refresh: Token = %q, want the cached token-1", tok)
	}
	f.wantRequests(t, 2)
	// Callers meanwhile get the cached token without asking again.
	if at, _ := f.m.NextRefresh(pod.UID); !at.Equal(f.clock.Now().Add(10 * time.Second)) {
		t.Errorf("NextRefresh after a failure = %v, want 10 s later, %v", at, f.clock.Now().Add(10*time.Second))
	}
	f.clock.Step(9 * time.Second)
	f.token(t, pod, p)
	f.wantRequests(t, 2)
	f.clock.Step(time.Second)
	f.token(t, pod, p)
	f.wantRequests(t, 3)

	// Expired: the failure is the caller's, the apiserver's error within.
	f.clock.Step(12*time.Minute - 10*time.Second)
	tok, err := f.m.Token(t.Context(), pod, p)
	if err == nil {
		t.Fatalf("expired and refresh failing: Token = %q, want an error", tok)
	}
	if !apierrors.IsServiceUnavailable(err) || !errors.Is(err, down) {
		t.Errorf("error %v does not wrap the apiserver's", err)
	}
	if !strings.Contains(err.Error(), "serviceaccount apps/builder") || !strings.Contains(err.Error(), "pod apps/web") {
		t.Errorf("error %q does not name the pod and serviceaccount apps/builder", err)
	}
	f.wantRequests(t, 4)

	f.set(func(f *fixture) { f.fail = nil })
	if tok := f.token(t, pod, p); tok != "token-5" {
		t.Errorf("apiserver back: Token = %q, want a new token-5", tok)
	}
}

func TestForbiddenSaysWhy(t *testing.T) {
	f := newFixture(t)
	pod := testPod("web", "builder")
	f.set(func(f *fixture) {
		f.fail = apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "builder", errors.New("no relationship found"))
	})
	_, err := f.m.Token(t.Context(), pod, projection("", 0))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "only for pods bound to it") {
		t.Errorf("error = %v, want a 403 saying a node has tokens only for its own pods", err)
	}
	if _, ok := f.m.NextRefresh(pod.UID); ok {
		t.Error("a refused token was cached")
	}
}

func TestBadResponsesRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		respond func(*authenticationv1.TokenRequest)
		want    string
	}{
		{"no token", func(tr *authenticationv1.TokenRequest) { tr.Status.Token = "" }, "returned no token"},
		{"oversized", func(tr *authenticationv1.TokenRequest) { tr.Status.Token = strings.Repeat("x", 64<<10+1) }, "token of 65537 bytes, over the limit of 65536"},
		{"expired", func(tr *authenticationv1.TokenRequest) { tr.Status.ExpirationTimestamp = metav1.NewTime(t0) }, "not after it was requested"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.set(func(f *fixture) { f.respond = tc.respond })
			pod := testPod("web", "builder")
			tok, err := f.m.Token(t.Context(), pod, projection("", 0))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "serviceaccount apps/builder") {
				t.Errorf("Token = %q, %v; want an error naming apps/builder and saying %q", tok, err, tc.want)
			}
			if _, ok := f.m.NextRefresh(pod.UID); ok {
				t.Error("a refused token was cached")
			}
		})
	}
	// A token at the limit is taken.
	f := newFixture(t)
	f.set(func(f *fixture) {
		f.respond = func(tr *authenticationv1.TokenRequest) { tr.Status.Token = strings.Repeat("x", 64<<10) }
	})
	f.token(t, testPod("web", "builder"), projection("", 0))
}

func TestNextRefreshIsTheEarliest(t *testing.T) {
	f := newFixture(t)
	pod := testPod("web", "builder")
	if _, ok := f.m.NextRefresh(pod.UID); ok {
		t.Error("NextRefresh reports a time for a pod without tokens")
	}
	f.token(t, pod, projection("long", 7200))
	f.clock.Step(time.Minute)
	f.token(t, pod, projection("short", 3600))
	want := t0.Add(time.Minute + 48*time.Minute) // not t0 + 96 min
	if at, ok := f.m.NextRefresh(pod.UID); !ok || !at.Equal(want) {
		t.Errorf("NextRefresh = %v, %v; want %v", at, ok, want)
	}
}

func TestDeletePod(t *testing.T) {
	f := newFixture(t)
	web, db := testPod("web", "builder"), testPod("db", "builder")
	p := projection("", 0)
	f.token(t, web, p)
	f.token(t, db, p)
	f.m.DeletePod(web.UID)
	if _, ok := f.m.NextRefresh(web.UID); ok {
		t.Error("NextRefresh reports a time for a deleted pod")
	}
	if _, ok := f.m.NextRefresh(db.UID); !ok {
		t.Error("deleting one pod dropped another's token")
	}
	if tok := f.token(t, web, p); tok != "token-3" {
		t.Errorf("after DeletePod: Token = %q, want a new token-3", tok)
	}
}

func TestDeletePodDuringRequest(t *testing.T) {
	f := newFixture(t)
	gate := make(chan struct{})
	f.set(func(f *fixture) { f.gate, f.entered = gate, make(chan struct{}, 1) })
	pod := testPod("web", "builder")
	done := make(chan string)
	go func() { done <- f.tokenAsync(t, pod, projection("", 0)) }()
	<-f.entered
	f.m.DeletePod(pod.UID)
	close(gate)
	if tok := <-done; tok != "token-1" {
		t.Errorf("Token = %q, want token-1", tok)
	}
	if _, ok := f.m.NextRefresh(pod.UID); ok {
		t.Error("a request that ended after DeletePod cached the deleted pod's token")
	}
}

func TestConcurrentCallersShareOneRequest(t *testing.T) {
	f := newFixture(t)
	gate := make(chan struct{})
	f.set(func(f *fixture) { f.gate, f.entered = gate, make(chan struct{}, 100) })
	pod, p := testPod("web", "builder"), projection("", 0)
	const callers = 20
	var started, wg sync.WaitGroup
	started.Add(callers)
	tokens := make([]string, callers)
	for i := range callers {
		wg.Go(func() {
			started.Done()
			tokens[i] = f.tokenAsync(t, pod, p)
		})
	}
	started.Wait()
	<-f.entered
	// Callers that join late find the token cached; either way, one request.
	time.Sleep(20 * time.Millisecond)
	close(gate)
	wg.Wait()
	f.wantRequests(t, 1)
	for i, tok := range tokens {
		if tok != "token-1" {
			t.Errorf("caller %d got %q, want token-1", i, tok)
		}
	}
}

func TestCallerGivingUpLeavesTheSharedRequest(t *testing.T) {
	f := newFixture(t)
	gate := make(chan struct{})
	f.set(func(f *fixture) { f.gate, f.entered = gate, make(chan struct{}, 1) })
	pod, p := testPod("web", "builder"), projection("", 0)
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error)
	go func() {
		_, err := f.m.Token(ctx, pod, p)
		first <- err
	}()
	<-f.entered
	second := make(chan string)
	go func() { second <- f.tokenAsync(t, pod, p) }()
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: error = %v, want context.Canceled", err)
	}
	close(gate)
	if tok := <-second; tok != "token-1" {
		t.Errorf("remaining caller: Token = %q, want token-1", tok)
	}
	f.wantRequests(t, 1)
}

func TestMetrics(t *testing.T) {
	f := newFixture(t)
	reg := metrics.NewKubeRegistry()
	if err := f.m.metrics.Register(reg); err != nil {
		t.Fatal(err)
	}
	pod, p := testPod("web", "builder"), projection("", 0)
	f.token(t, pod, p)
	f.set(func(f *fixture) { f.fail = apierrors.NewServiceUnavailable("away") })
	f.clock.Step(48 * time.Minute)
	f.token(t, pod, p)
	want := `# HELP nodeagent_tokens_cached_after_failure_total [ALPHA] Failed refreshes after which the cached, still valid, token was handed out.
# TYPE nodeagent_tokens_cached_after_failure_total counter
nodeagent_tokens_cached_after_failure_total 1
# HELP nodeagent_tokens_requests_total [ALPHA] Service account token requests sent to the apiserver, by result (ok, forbidden, invalid, error; lagging: refused while the apiserver had not yet seen the pod bound to the node, and asked again).
# TYPE nodeagent_tokens_requests_total counter
nodeagent_tokens_requests_total{result="error"} 1
nodeagent_tokens_requests_total{result="ok"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nodeagent_tokens_requests_total", "nodeagent_tokens_cached_after_failure_total"); err != nil {
		t.Error(err)
	}
}

// NodeRestriction's refusals while its informer has not seen the pod
// bound here (the pod not found, or "scheduled on a different node") are
// asked again until the token comes; any other refusal is the answer at
// once.
func TestRefusalsOfABindingNotSeenYetAreAskedAgain(t *testing.T) {
	lagging := []error{
		apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web"),
		apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "builder",
			errors.New("node requested token bound to a pod scheduled on a different node")),
	}
	for _, lag := range lagging {
		f := newFixture(t)
		pod := testPod("web", "builder")
		refusals := 2
		f.set(func(f *fixture) { f.fail = lag })
		done := make(chan error, 1)
		go func() {
			_, err := f.m.Token(t.Context(), pod, projection("", 0))
			done <- err
		}()
		for len(f.requests()) < refusals {
			time.Sleep(10 * time.Millisecond)
		}
		f.set(func(f *fixture) { f.fail = nil })
		if err := <-done; err != nil {
			t.Errorf("after %v: Token = %v, want the token once the apiserver has seen the binding", lag, err)
		}
	}
	for _, final := range []error{
		apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, "builder"),
		apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "builder", errors.New("no relationship found")),
	} {
		f := newFixture(t)
		f.set(func(f *fixture) { f.fail = final })
		if _, err := f.m.Token(t.Context(), testPod("web", "builder"), projection("", 0)); err == nil {
			t.Errorf("Token succeeded through %v", final)
		}
		f.wantRequests(t, 1)
	}
}
