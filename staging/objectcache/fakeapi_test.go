package objectcache

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

const ns = "default"

// fakeAPI is client-go's fake clientset with reactors that let a test see
// and drive every list and watch: each watch gets its own fake watcher,
// recorded under "resource/name", and lists of a resource can be made to
// fail.
type fakeAPI struct {
	*fake.Clientset

	mu      sync.Mutex
	watches map[string][]*watch.RaceFreeFakeWatcher
	lists   map[string]int
	listErr map[string]error // by resource
	gets    []string         // "name@resourceVersion" of every get
	// getFn, if set, answers gets instead of the object tracker.
	getFn func(name, rv string) (runtime.Object, error)
}

func newFakeAPI(objs ...runtime.Object) *fakeAPI {
	api := &fakeAPI{
		Clientset: fake.NewClientset(objs...),
		watches:   map[string][]*watch.RaceFreeFakeWatcher{},
		lists:     map[string]int{},
		listErr:   map[string]error{},
	}
	api.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		name, _ := a.(k8stesting.WatchAction).GetWatchRestrictions().Fields.RequiresExactMatch("metadata.name")
		w := watch.NewRaceFreeFake()
		api.mu.Lock()
		defer api.mu.Unlock()
		key := a.GetResource().Resource + "/" + name
		api.watches[key] = append(api.watches[key], w)
		return true, w, nil
	})
	api.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name, _ := a.(k8stesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("metadata.name")
		api.mu.Lock()
		defer api.mu.Unlock()
		api.lists[a.GetResource().Resource+"/"+name]++
		if err := api.listErr[a.GetResource().Resource]; err != nil {
			return true, nil, err
		}
		return false, nil, nil // the object tracker answers
	})
	api.PrependReactor("get", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		get := a.(k8stesting.GetActionImpl)
		api.mu.Lock()
		defer api.mu.Unlock()
		api.gets = append(api.gets, get.Name+"@"+get.GetOptions.ResourceVersion)
		if api.getFn != nil {
			obj, err := api.getFn(get.Name, get.GetOptions.ResourceVersion)
			return true, obj, err
		}
		return false, nil, nil
	})
	return api
}

func (api *fakeAPI) setGetFn(f func(name, rv string) (runtime.Object, error)) {
	api.mu.Lock()
	defer api.mu.Unlock()
	api.getFn = f
}

// takeGets returns the gets since the last call.
func (api *fakeAPI) takeGets() []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	g := api.gets
	api.gets = nil
	return g
}

func (api *fakeAPI) failLists(resource string, err error) {
	api.mu.Lock()
	defer api.mu.Unlock()
	api.listErr[resource] = err
}

// opened returns how many watches were opened for key; running, how many
// of them have not been stopped.
func (api *fakeAPI) opened(key string) int {
	api.mu.Lock()
	defer api.mu.Unlock()
	return len(api.watches[key])
}

func (api *fakeAPI) running(key string) int {
	api.mu.Lock()
	defer api.mu.Unlock()
	n := 0
	for _, w := range api.watches[key] {
		if !w.IsStopped() {
			n++
		}
	}
	return n
}

func (api *fakeAPI) listCount(key string) int {
	api.mu.Lock()
	defer api.mu.Unlock()
	return api.lists[key]
}

// watcher waits for the n-th watch (from 1) of key to open and returns it.
func (api *fakeAPI) watcher(t *testing.T, key string, n int) *watch.RaceFreeFakeWatcher {
	t.Helper()
	eventually(t, func() bool { return api.opened(key) >= n }, "watch %d of %s to open", n, key)
	api.mu.Lock()
	defer api.mu.Unlock()
	return api.watches[key][n-1]
}

// eventually polls cond until it holds; the timeout is only a safety net
// against a hung test, never a performance bound.
func eventually(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+format, args...)
		}
		time.Sleep(time.Millisecond)
	}
}

func newClock() *testingclock.FakeClock {
	return testingclock.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
}

func configMap(name, rv, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, ResourceVersion: rv},
		Data:       map[string]string{"k": value},
	}
}

func immutableConfigMap(name, rv, value string) *corev1.ConfigMap {
	cm := configMap(name, rv, value)
	cm.Immutable = new(true)
	return cm
}

func secret(name, rv, value string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, ResourceVersion: rv},
		Data:       map[string][]byte{"k": []byte(value)},
	}
}

// podWithConfigMaps returns a pod that mounts each named ConfigMap.
func podWithConfigMaps(name string, configMaps ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)}}
	for _, cm := range configMaps {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: cm, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}},
		}})
	}
	return pod
}

// startWatching runs a watching manager over api until the test ends.
func startWatching[T Object](t *testing.T, kind Kind[T], api *fakeAPI, clk *testingclock.FakeClock, opts WatchingOptions) *WatchingManager[T] {
	t.Helper()
	opts.Client, opts.Clock = api, clk
	m, err := NewWatching(kind, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return m
}

func mustGet[T Object](t *testing.T, get func(context.Context, string, string) (T, error), name string) T {
	t.Helper()
	obj, err := get(context.Background(), ns, name)
	if err != nil {
		t.Fatalf("Get(%s): %v", name, err)
	}
	return obj
}
