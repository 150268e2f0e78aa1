package objectcache

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// getter is what both strategies offer a pod's sync.
type getter interface {
	RegisterPod(*corev1.Pod)
	UnregisterPod(*corev1.Pod)
	Get(context.Context, string, string) (*corev1.ConfigMap, error)
}

var (
	_ getter = (*CachingManager[*corev1.ConfigMap])(nil)
	_ getter = (*WatchingManager[*corev1.ConfigMap])(nil)
)

// benchManager returns a manager of the strategy over a fake apiserver
// holding n ConfigMaps, cm-0 to cm-(n-1), running until the benchmark ends
// if run is set.
func benchManager(b *testing.B, strategy string, n int, run bool) getter {
	b.Helper()
	api := newFakeAPI()
	for i := range n {
		if err := api.Tracker().Add(configMap(fmt.Sprintf("cm-%d", i), "1", "v")); err != nil {
			b.Fatal(err)
		}
	}
	if strategy == "caching" {
		m, err := NewCaching(ConfigMaps(), CachingOptions{Client: api, TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	m, err := NewWatching(ConfigMaps(), WatchingOptions{Client: api, Clock: clock.RealClock{}})
	if err != nil {
		b.Fatal(err)
	}
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		b.Cleanup(func() { cancel(); <-done })
	}
	return m
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// BenchmarkGet is the hot path: a synced (watching) or fresh (caching)
// object read by a pod's sync.
func BenchmarkGet(b *testing.B) {
	for _, strategy := range []string{"watching", "caching"} {
		b.Run(strategy, func(b *testing.B) {
			m := benchManager(b, strategy, 1, true)
			m.RegisterPod(podWithConfigMaps("p", "cm-0"))
			ctx := context.Background()
			if _, err := m.Get(ctx, ns, "cm-0"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Get(ctx, ns, "cm-0"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(strategy+"-parallel", func(b *testing.B) {
			m := benchManager(b, strategy, 1, true)
			m.RegisterPod(podWithConfigMaps("p", "cm-0"))
			ctx := context.Background()
			if _, err := m.Get(ctx, ns, "cm-0"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := m.Get(ctx, ns, "cm-0"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkRegisterPod10Refs registers a pod that references 10
// ConfigMaps:
//   - reregister: the same pod again (a pod update), nothing to add or drop;
//   - shared: a new pod whose objects other pods already reference, then
//     unregistered (reference counting only);
//   - new-objects: a new pod referencing 10 objects nobody references yet,
//     then unregistered, on a manager that is not running, so that watches
//     are tracked but not opened (the fake apiserver would dominate).
func BenchmarkRegisterPod10Refs(b *testing.B) {
	for _, strategy := range []string{"watching", "caching"} {
		b.Run(strategy+"/reregister", func(b *testing.B) {
			m := benchManager(b, strategy, 10, true)
			pod := podWithConfigMaps("p", names("cm", 10)...)
			m.RegisterPod(pod)
			b.ReportAllocs()
			for b.Loop() {
				m.RegisterPod(pod)
			}
		})
		b.Run(strategy+"/shared", func(b *testing.B) {
			m := benchManager(b, strategy, 10, true)
			m.RegisterPod(podWithConfigMaps("keeper", names("cm", 10)...))
			pod := podWithConfigMaps("p", names("cm", 10)...)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				pod.UID = types.UID(fmt.Sprint(i))
				m.RegisterPod(pod)
				m.UnregisterPod(pod)
				i++
			}
		})
		b.Run(strategy+"/new-objects", func(b *testing.B) {
			m := benchManager(b, strategy, 0, false)
			pod := podWithConfigMaps("p", names("new", 10)...)
			b.ReportAllocs()
			for b.Loop() {
				m.RegisterPod(pod)
				m.UnregisterPod(pod)
			}
		})
	}
}
