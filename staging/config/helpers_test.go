package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

const testNode = "node1"

// testPod is a minimal API-style pod; mutators adjust it.
func testPod(name, uid string, mutators ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
	}
	for _, m := range mutators {
		m(p)
	}
	return p
}

func withImage(img string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Image = img }
}

func withLabel(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = map[string]string{k: v} }
}

func withAnnotation(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func withResourceVersion(rv string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.ResourceVersion = rv }
}

func withPhase(phase corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = phase }
}

func withDeletion() func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		p.DeletionTimestamp = &ts
		p.DeletionGracePeriodSeconds = new(int64(30))
	}
}

func asMirror(p *corev1.Pod) { withAnnotation(podtypes.ConfigMirrorAnnotationKey, "h")(p) }

// summarize renders an update as "OP source [source:name ...]".
func summarize(u podtypes.PodUpdate) string {
	names := make([]string, len(u.Pods))
	for i, p := range u.Pods {
		names[i] = p.Annotations[podtypes.ConfigSourceAnnotationKey] + ":" + p.Name
	}
	return fmt.Sprintf("%s %s [%s]", u.Op, u.Source, strings.Join(names, " "))
}

// drain returns every update already waiting on ch.
func drain(ch <-chan podtypes.PodUpdate) []string {
	out := []string{}
	for {
		select {
		case u := <-ch:
			out = append(out, summarize(u))
		default:
			return out
		}
	}
}

// chanSink is a Sink that forwards updates to a channel.
type chanSink chan podtypes.PodUpdate

func (c chanSink) Merge(ctx context.Context, u podtypes.PodUpdate) error {
	select {
	case c <- u:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next waits for the next update on ch, failing the test after a while.
func next(t testing.TB, ch <-chan podtypes.PodUpdate) podtypes.PodUpdate {
	t.Helper()
	select {
	case u := <-ch:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no update within 10s")
	}
	return podtypes.PodUpdate{}
}

// waitFor reads updates until one satisfies ok.
func waitFor(t testing.TB, ch <-chan podtypes.PodUpdate, what string, ok func(podtypes.PodUpdate) bool) podtypes.PodUpdate {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case u := <-ch:
			if ok(u) {
				return u
			}
		case <-deadline:
			t.Fatalf("no update with %s within 10s", what)
		}
	}
}

// podNames lists the pods' names.
func podNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// podManifest is a valid static pod manifest named name with one container.
func podManifest(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: main\n    image: %s\n", name, image)
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
