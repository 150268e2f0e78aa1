package podmanager

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

const benchPods = 10000

func benchManager(b *testing.B) (*Manager, []*corev1.Pod) {
	b.Helper()
	pods := make([]*corev1.Pod, benchPods)
	for i := range pods {
		pods[i] = staticPod(fmt.Sprintf("uid-%05d", i), "ns", fmt.Sprintf("pod-%05d", i), "h")
	}
	m := New()
	m.SetPods(pods)
	return m, pods
}

func BenchmarkPodByUID10k(b *testing.B) {
	m, pods := benchManager(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := m.PodByUID(types.UID(pods[i%benchPods].UID)); !ok {
			b.Fatal("missing pod")
		}
		i++
	}
}

func BenchmarkPodByFullName10k(b *testing.B) {
	m, pods := benchManager(b)
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name + "_" + p.Namespace
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := m.PodByFullName(names[i%benchPods]); !ok {
			b.Fatal("missing pod")
		}
		i++
	}
}

func BenchmarkUpdatePod10k(b *testing.B) {
	m, pods := benchManager(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.UpdatePod(pods[i%benchPods])
		i++
	}
}
