package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// apiPod is a pod bound by the admin to node, as the scheduler would.
func apiPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: map[string]string{"test": "apisource"}},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "main", Image: env.BusyboxImage}},
		},
	}
}

// nextUpdate waits for the merger's next update that concerns the named
// pod (or, with name "", the next update at all) and returns its op.
func nextUpdate(ctx context.Context, t *testing.T, m *config.Merger, name string) (podtypes.PodUpdate, *corev1.Pod) {
	t.Helper()
	for {
		select {
		case u := <-m.Updates():
			if name == "" {
				return u, nil
			}
			if i := slices.IndexFunc(u.Pods, func(p *corev1.Pod) bool { return p.Name == name }); i >= 0 {
				return u, u.Pods[i]
			}
		case <-ctx.Done():
			t.Fatalf("no update about %q: %v", name, ctx.Err())
		}
	}
}

// TestAPIServerSource runs the apiserver source as the node's identity
// (Node authorizer and NodeRestriction live) against the real apiserver
// while the admin binds, changes and deletes pods.
func TestAPIServerSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	registerNode(ctx, t)
	pods := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault)
	suffix := fmt.Sprint(time.Now().UnixNano() % 100000)
	mine, other := "apisource-mine-"+suffix, "apisource-other-"+suffix
	force := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	t.Cleanup(func() {
		for _, n := range []string{mine, other} {
			_ = pods.Delete(context.Background(), n, force)
		}
	})

	merger := config.NewMerger(config.MergerOptions{Mode: config.Incremental})
	src, err := config.NewAPIServerSource(config.APIServerOptions{Pods: env.NodeClient.CoreV1().Pods(metav1.NamespaceAll), NodeName: env.NodeName, Sink: merger})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- src.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()

	// The first list makes the source ready, whatever it holds.
	if u, _ := nextUpdate(ctx, t, merger, ""); u.Source != podtypes.APIServerSource || !merger.SeenAllSources(podtypes.APIServerSource) {
		t.Fatalf("first update %v from %s; the source is not ready", u.Op, u.Source)
	}

	// A pod bound to another node never reaches this node's source.
	if _, err := pods.Create(ctx, apiPod(other, "some-other-node"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding a pod to another node: %v", err)
	}
	created, err := pods.Create(ctx, apiPod(mine, env.NodeName), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("binding a pod to %s: %v", env.NodeName, err)
	}
	u, got := nextUpdate(ctx, t, merger, mine)
	if u.Op != podtypes.ADD || got.UID != created.UID || got.Annotations[podtypes.ConfigSourceAnnotationKey] != "api" {
		t.Fatalf("after the bind: %v of uid %s (source %q), want ADD of %s from api", u.Op, got.UID, got.Annotations[podtypes.ConfigSourceAnnotationKey], created.UID)
	}

	// A spec-level change (labels) is an UPDATE.
	created.Labels["tier"] = "web"
	updated, err := pods.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u, got := nextUpdate(ctx, t, merger, mine); u.Op != podtypes.UPDATE || got.Labels["tier"] != "web" {
		t.Fatalf("after a label change: %v with labels %v, want UPDATE", u.Op, got.Labels)
	}

	// A status-only change is a RECONCILE.
	updated.Status.Phase = corev1.PodRunning
	updated.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	if _, err := pods.UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u, got := nextUpdate(ctx, t, merger, mine); u.Op != podtypes.RECONCILE || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("after a status change: %v with phase %s, want RECONCILE", u.Op, got.Status.Phase)
	}

	// A graceful delete of a bound pod leaves it terminating: a DELETE.
	if err := pods.Delete(ctx, mine, metav1.DeleteOptions{GracePeriodSeconds: new(int64(30))}); err != nil {
		t.Fatal(err)
	}
	if u, got := nextUpdate(ctx, t, merger, mine); u.Op != podtypes.DELETE || got.DeletionTimestamp == nil {
		t.Fatalf("after a graceful delete: %v (deletionTimestamp %v), want DELETE", u.Op, got.DeletionTimestamp)
	}

	// Once it is gone from the apiserver, it is removed. Forcing shortens
	// the grace period first, which is one more DELETE on the way.
	if err := pods.Delete(ctx, mine, force); err != nil {
		t.Fatal(err)
	}
	for {
		u, _ := nextUpdate(ctx, t, merger, mine)
		if u.Op == podtypes.REMOVE {
			break
		}
		if u.Op != podtypes.DELETE {
			t.Fatalf("after the pod is gone: %v, want REMOVE (after DELETEs)", u.Op)
		}
	}
	for _, p := range merger.Pods() {
		if p.Name == other {
			t.Errorf("the pod bound to another node reached this node: %s", p.Spec.NodeName)
		}
	}
}
