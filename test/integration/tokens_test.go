package integration

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/tokens"
	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// TestTokens gets pods' service account tokens as the node (not the admin)
// from the real apiserver, under the Node authorizer and NodeRestriction,
// and has the apiserver review them. No pod runs: a token needs only the
// pod object, bound to the node.
func TestTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	admin := env.AdminClient
	ns := "tokens-" + strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
	elsewhere := ns + "-elsewhere" // a node that is not env's
	const audience = "vault.example"
	withAudience := &corev1.ServiceAccountTokenProjection{Path: "vault-token", Audience: audience, ExpirationSeconds: new(int64(3600))}
	apiserverAudience := &corev1.ServiceAccountTokenProjection{Path: "token"}

	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTokensNamespace(t, ns) })
	for _, sa := range []string{"app", "other"} {
		obj := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The pod declares the projections it is given tokens for: NodeRestriction
	// lets a node ask only for audiences its pods name.
	pod := tokensPod(ctx, t, ns, "bound", env.NodeName, "app", withAudience, apiserverAudience)
	sameAccountElsewhere := tokensPod(ctx, t, ns, "elsewhere-app", elsewhere, "app", apiserverAudience)
	ownAccountElsewhere := tokensPod(ctx, t, ns, "elsewhere-other", elsewhere, "other", apiserverAudience)
	waitNodeMayRequestToken(ctx, t, pod)

	clock := testingclock.NewFakeClock(time.Now())
	m, err := tokens.New(tokens.Options{Client: env.NodeClient, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	first, err := m.Token(ctx, pod, withAudience)
	if err != nil {
		t.Fatalf("Token as the node for its own pod: %v", err)
	}
	reviewToken(ctx, t, first, []string{audience}, pod)
	def, err := m.Token(ctx, pod, apiserverAudience)
	if err != nil {
		t.Fatalf("Token with the apiserver's audience: %v", err)
	}
	reviewToken(ctx, t, def, nil, pod)
	if again, err := m.Token(ctx, pod, withAudience); err != nil || again != first {
		t.Errorf("Token again at once = a different token or %v; want the cached one", err)
	}

	// Past 80 % of the hour the token lives: a new one.
	at, ok := m.NextRefresh(pod.UID)
	if want := clock.Now().Add(48 * time.Minute); !ok || at.Before(want.Add(-5*time.Second)) || at.After(want) {
		t.Fatalf("NextRefresh = %v, %v; want about 80%% of an hour from now, %v", at, ok, want)
	}
	clock.SetTime(at.Add(time.Second))
	second, err := m.Token(ctx, pod, withAudience)
	if err != nil {
		t.Fatalf("Token past 80%%: %v", err)
	}
	if second == first {
		t.Fatal("Token past 80% of the token's life returned the same token, want a new one")
	}
	reviewToken(ctx, t, second, []string{audience}, pod)

	// Refused with the node's credentials: a pod bound to another node,
	// whether the service account is one of this node's pods' (NodeRestriction
	// refuses the binding) or not (the Node authorizer refuses the account);
	// and an audience this node's pod does not name (NodeRestriction).
	refused, err := tokens.New(tokens.Options{Client: kubernetes.NewForConfigOrDie(framework.ExpectForbidden(env.NodeConfig))})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pod    *corev1.Pod
		p      *corev1.ServiceAccountTokenProjection
		reason string
	}{
		{sameAccountElsewhere, apiserverAudience, "bound to a pod scheduled on a different node"},
		{ownAccountElsewhere, apiserverAudience, "no relationship found between node"},
		{pod, &corev1.ServiceAccountTokenProjection{Path: "t", Audience: "unnamed.example"}, `not authorized to request tokens for audience "unnamed.example"`},
	} {
		tok, err := refused.Token(ctx, tc.pod, tc.p)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(msg, "only for pods bound to it") || !strings.Contains(msg, tc.reason) ||
			!strings.Contains(msg, "serviceaccount "+ns+"/"+tc.pod.Spec.ServiceAccountName) {
			t.Errorf("Token for pod %s on node %s, audience %q = %q, %v; want a 403 naming the service account and saying %q",
				tc.pod.Name, tc.pod.Spec.NodeName, tc.p.Audience, tok, err, tc.reason)
			continue
		}
		t.Logf("refused, as expected: %v", err)
	}
}

// tokensPod creates (as the admin) a pod bound to node, with a projected
// volume of the given token projections.
func tokensPod(ctx context.Context, t *testing.T, ns, name, node, serviceAccount string, projections ...*corev1.ServiceAccountTokenProjection) *corev1.Pod {
	t.Helper()
	vol := &corev1.ProjectedVolumeSource{}
	for _, p := range projections {
		vol.Sources = append(vol.Sources, corev1.VolumeProjection{ServiceAccountToken: p})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			ServiceAccountName:           serviceAccount,
			AutomountServiceAccountToken: new(false),
			Containers: []corev1.Container{{Name: "main", Image: env.BusyboxImage,
				VolumeMounts: []corev1.VolumeMount{{Name: "tokens", MountPath: "/tokens"}}}},
			Volumes: []corev1.Volume{{Name: "tokens", VolumeSource: corev1.VolumeSource{Projected: vol}}},
		},
	}
	created, err := env.AdminClient.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// waitNodeMayRequestToken waits until the Node authorizer, which learns of
// pods from a watch, lets the node request a token bound to pod. Its 403s
// meanwhile are expected.
func waitNodeMayRequestToken(ctx context.Context, t *testing.T, pod *corev1.Pod) {
	t.Helper()
	probe := kubernetes.NewForConfigOrDie(framework.ExpectForbidden(env.NodeConfig))
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	for {
		_, err := probe.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.Spec.ServiceAccountName, req, metav1.CreateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsForbidden(err) || ctx.Err() != nil {
			t.Fatalf("the node cannot request a token for its own pod: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reviewToken has the apiserver (asked by the admin) authenticate token for
// audiences (nil: its own), as the service account of pod, bound to pod.
func reviewToken(ctx context.Context, t *testing.T, token string, audiences []string, pod *corev1.Pod) {
	t.Helper()
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences}}
	got, err := env.AdminClient.AuthenticationV1().TokenReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenReview: %v", err)
	}
	st := got.Status
	if !st.Authenticated {
		t.Fatalf("TokenReview: the apiserver does not accept the token: %q", st.Error)
	}
	if want := "system:serviceaccount:" + pod.Namespace + ":" + pod.Spec.ServiceAccountName; st.User.Username != want {
		t.Errorf("TokenReview: user %q, want %q", st.User.Username, want)
	}
	for claim, want := range map[string]string{
		"authentication.kubernetes.io/pod-name": pod.Name,
		"authentication.kubernetes.io/pod-uid":  string(pod.UID),
	} {
		if got := st.User.Extra[claim]; len(got) != 1 || got[0] != want {
			t.Errorf("TokenReview: extra %s = %q, want %q", claim, got, want)
		}
	}
	if audiences != nil && !slices.Equal(st.Audiences, audiences) {
		t.Errorf("TokenReview: audiences %q, want %q", st.Audiences, audiences)
	}
}

// deleteTokensNamespace deletes what TestTokens made. No namespace
// controller runs, so the namespace's contents go first, one by one.
func deleteTokensNamespace(t *testing.T, ns string) {
	ctx := context.Background()
	admin := env.AdminClient
	force := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	if err := admin.CoreV1().Pods(ns).DeleteCollection(ctx, force, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting the pods of %s: %v", ns, err)
	}
	if err := admin.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting the service accounts of %s: %v", ns, err)
	}
	if err := admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting namespace %s: %v", ns, err)
	}
}
