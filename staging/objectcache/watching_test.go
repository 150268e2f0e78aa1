package objectcache

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchState is what the test can see of the watches: running watches per
// object as the fake apiserver counts them, and the manager's own count.
type watchState struct {
	Running map[string]int
	Active  int
}

func observe[T Object](api *fakeAPI, m *WatchingManager[T], keys ...string) watchState {
	s := watchState{Running: map[string]int{}, Active: m.ActiveWatches()}
	for _, k := range keys {
		if n := api.running(k); n > 0 {
			s.Running[k] = n
		}
	}
	return s
}

func TestWatchingCountsReferencesPerPod(t *testing.T) {
	api := newFakeAPI(configMap("a", "1", "a"), configMap("b", "1", "b"), configMap("c", "1", "c"), configMap("d", "1", "d"))
	m := startWatching(t, ConfigMaps(), api, newClock(), WatchingOptions{})
	keys := []string{"configmaps/a", "configmaps/b", "configmaps/c", "configmaps/d"}
	p1 := podWithConfigMaps("p1", "a", "b", "b") // b twice: one reference
	p2 := podWithConfigMaps("p2", "b", "c")
	p2changed := podWithConfigMaps("p2", "c", "d")

	steps := []struct {
		name string
		do   func()
		want map[string]int
	}{
		{"register p1", func() { m.RegisterPod(p1) }, map[string]int{"configmaps/a": 1, "configmaps/b": 1}},
		{"register p2 sharing b", func() { m.RegisterPod(p2) }, map[string]int{"configmaps/a": 1, "configmaps/b": 1, "configmaps/c": 1}},
		{"register p2 again, unchanged", func() { m.RegisterPod(p2) }, map[string]int{"configmaps/a": 1, "configmaps/b": 1, "configmaps/c": 1}},
		{"unregister p1: b stays for p2", func() { m.UnregisterPod(p1) }, map[string]int{"configmaps/b": 1, "configmaps/c": 1}},
		{"p2 drops b, keeps c, adds d", func() { m.RegisterPod(p2changed) }, map[string]int{"configmaps/c": 1, "configmaps/d": 1}},
		{"unregister p1 again: no-op", func() { m.UnregisterPod(p1) }, map[string]int{"configmaps/c": 1, "configmaps/d": 1}},
		{"unregister p2", func() { m.UnregisterPod(p2changed) }, map[string]int{}},
	}
	for _, step := range steps {
		step.do()
		want := watchState{Running: step.want, Active: len(step.want)}
		for k := range step.want {
			api.watcher(t, k, 1)
		}
		eventually(t, func() bool { return cmp.Equal(want, observe(api, m, keys...)) },
			"after %q: %+v, got %+v", step.name, want, observe(api, m, keys...))
	}
	// Exactly one watch was ever opened per object: re-registrations and
	// shared references caused no churn.
	for _, k := range keys {
		if n := api.opened(k); n != 1 {
			t.Errorf("%s: %d watches opened, want 1", k, n)
		}
	}
}

func TestWatchingImmutableObjectIsReadOnceAndNeverWatched(t *testing.T) {
	api := newFakeAPI(immutableConfigMap("frozen", "5", "v1"), configMap("thawed", "6", "v1"))
	m := startWatching(t, ConfigMaps(), api, newClock(), WatchingOptions{})
	m.RegisterPod(podWithConfigMaps("p", "frozen", "thawed"))

	if got := mustGet(t, m.Get, "frozen"); got.Data["k"] != "v1" {
		t.Errorf("frozen = %v, want v1", got.Data)
	}
	w := api.watcher(t, "configmaps/thawed", 1)
	if n := api.opened("configmaps/frozen"); n != 0 {
		t.Errorf("%d watches opened for an immutable object, want 0", n)
	}
	if n := m.ActiveWatches(); n != 1 {
		t.Errorf("ActiveWatches = %d, want 1", n)
	}

	// A mutable object that becomes immutable stops being watched, and
	// its last state is served from then on.
	w.Modify(immutableConfigMap("thawed", "7", "v2"))
	eventually(t, w.IsStopped, "the watch of a now-immutable object to stop")
	if n := m.ActiveWatches(); n != 0 {
		t.Errorf("ActiveWatches = %d, want 0", n)
	}
	if got := mustGet(t, m.Get, "thawed"); got.Data["k"] != "v2" {
		t.Errorf("thawed = %v, want v2", got.Data)
	}
	// Re-registering does not start watching immutable objects again.
	m.RegisterPod(podWithConfigMaps("p", "frozen", "thawed"))
	if a, b := api.opened("configmaps/frozen"), api.opened("configmaps/thawed"); a != 0 || b != 1 {
		t.Errorf("watches opened after re-registration: frozen %d, thawed %d; want 0, 1", a, b)
	}
	if n := api.listCount("configmaps/frozen"); n != 1 {
		t.Errorf("frozen listed %d times, want 1", n)
	}
}

func TestWatchingFollowsUpdatesDeletesAndCreates(t *testing.T) {
	api := newFakeAPI(configMap("a", "1", "v1"))
	var mu sync.Mutex
	changes := map[string]int{}
	changed := func(name string) int {
		mu.Lock()
		defer mu.Unlock()
		return changes[name]
	}
	m := startWatching(t, ConfigMaps(), api, newClock(), WatchingOptions{OnChange: func(namespace, name string) {
		mu.Lock()
		defer mu.Unlock()
		changes[namespace+"/"+name]++
	}})
	m.RegisterPod(podWithConfigMaps("p", "a", "missing"))

	if got := mustGet(t, m.Get, "a"); got.Data["k"] != "v1" {
		t.Fatalf("a = %v, want v1", got.Data)
	}
	_, err := m.Get(context.Background(), ns, "missing")
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `configmaps "missing" not found`) {
		t.Fatalf("Get(missing) = %v, want the apiserver's NotFound", err)
	}

	wa, wm := api.watcher(t, "configmaps/a", 1), api.watcher(t, "configmaps/missing", 1)
	wa.Modify(configMap("a", "2", "v2"))
	wa.Modify(configMap("other", "3", "ignored")) // not ours: a server may ignore the selector
	wm.Add(configMap("missing", "4", "here"))
	eventually(t, func() bool {
		got, err := m.Get(context.Background(), ns, "a")
		return err == nil && got.Data["k"] == "v2"
	}, "the update of a")
	eventually(t, func() bool {
		got, err := m.Get(context.Background(), ns, "missing")
		return err == nil && got.Data["k"] == "here"
	}, "the creation of missing")
	// The first list of each is no change; the update, the creation and
	// the deletion are one each, and the other object none.
	eventually(t, func() bool { return changed(ns+"/a") == 1 && changed(ns+"/missing") == 1 },
		"OnChange once for the update of a and once for the creation of missing")
	wa.Delete(configMap("a", "5", "v2"))
	eventually(t, func() bool {
		_, err := m.Get(context.Background(), ns, "a")
		return apierrors.IsNotFound(err)
	}, "the deletion of a")
	eventually(t, func() bool { return changed(ns+"/a") == 2 }, "OnChange for the deletion of a")
	if n := changed(ns + "/other"); n != 0 {
		t.Errorf("OnChange for an object not watched: %d calls", n)
	}
}

func TestWatchingStopsIdleWatchesUntilReadAgain(t *testing.T) {
	api := newFakeAPI(configMap("env", "1", "e"), configMap("vol", "1", "v"))
	clk := newClock()
	m := startWatching(t, ConfigMaps(), api, clk, WatchingOptions{ResyncPeriod: time.Minute})
	pod := podWithConfigMaps("p", "env", "vol")
	m.RegisterPod(pod)
	mustGet(t, m.Get, "env")
	api.watcher(t, "configmaps/env", 1)
	api.watcher(t, "configmaps/vol", 1)

	// vol is read every resync, env never again. Past five resync periods
	// env's watch stops; vol's does not.
	for range 6 {
		mustGet(t, m.Get, "vol")
		clk.Step(time.Minute)
	}
	eventually(t, func() bool { return api.running("configmaps/env") == 0 }, "env's idle watch to stop")
	if n, a := api.running("configmaps/vol"), m.ActiveWatches(); n != 1 || a != 1 {
		t.Fatalf("vol running watches = %d, ActiveWatches = %d; want 1, 1", n, a)
	}

	// Reading env again restarts its watch: a miss that waits for a list.
	if got := mustGet(t, m.Get, "env"); got.Data["k"] != "e" {
		t.Errorf("env = %v, want e", got.Data)
	}
	api.watcher(t, "configmaps/env", 2)
	if n := m.ActiveWatches(); n != 2 {
		t.Errorf("ActiveWatches = %d after reading env again, want 2", n)
	}

	// Idle again, then re-registering the pod restarts it too.
	for range 6 {
		mustGet(t, m.Get, "vol")
		clk.Step(time.Minute)
	}
	eventually(t, func() bool { return api.running("configmaps/env") == 0 }, "env's idle watch to stop again")
	m.RegisterPod(pod)
	api.watcher(t, "configmaps/env", 3)
}

func TestWatchingSecrets(t *testing.T) {
	api := newFakeAPI(secret("pull", "1", "p"), secret("env", "1", "e"))
	m := startWatching(t, Secrets(), api, newClock(), WatchingOptions{})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, UID: "uid-p"},
		Spec: corev1.PodSpec{
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
			Containers: []corev1.Container{{Name: "c", EnvFrom: []corev1.EnvFromSource{{
				SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "env"}},
			}}}},
		},
	}
	m.RegisterPod(pod)
	for name, want := range map[string]string{"pull": "p", "env": "e"} {
		if got := mustGet(t, m.Get, name); string(got.Data["k"]) != want {
			t.Errorf("secret %s = %q, want %q", name, got.Data["k"], want)
		}
	}
	api.watcher(t, "secrets/pull", 1)
	api.watcher(t, "secrets/env", 1)
	m.UnregisterPod(pod)
	eventually(t, func() bool { return api.running("secrets/pull")+api.running("secrets/env") == 0 }, "secret watches to stop")
}
