package podmanager

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestConcurrentReadersAndWriters is for the race detector: writers churn
// static pods and mirrors while readers use every query. The final state
// must be exactly what the writers left.
func TestConcurrentReadersAndWriters(t *testing.T) {
	m := New()
	const writers, readers, rounds = 4, 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				name := fmt.Sprintf("pod-%d-%d", w, i%10)
				s := staticPod(fmt.Sprintf("s-%d-%d", w, i), "ns", name, fmt.Sprint(i))
				mr := mirrorPod(fmt.Sprintf("m-%d-%d", w, i), "ns", name, fmt.Sprint(i))
				m.AddPod(s)
				m.AddPod(mr)
				if i%3 == 0 {
					m.RemovePod(mr)
				}
				m.RemovePod(s)
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for i := range rounds {
				name := fmt.Sprintf("pod-%d-%d", i%writers, i%10)
				pod, _ := m.PodByName("ns", name)
				if pod != nil {
					m.MirrorPodByPod(pod)
					m.TranslatePodUID(pod.UID)
				}
				m.PodsAndMirrorPods()
				m.OrphanedMirrorPodFullNames()
				m.UIDTranslations()
			}
		})
	}
	wg.Wait()
	if n := len(m.Pods()); n != 0 {
		t.Errorf("%d regular pods left, want 0", n)
	}
	// Every writer removed its mirrors in rounds i%3==0; the others remain.
	wantMirrors := writers * (rounds - (rounds+2)/3)
	if n := len(m.MirrorPods()); n != wantMirrors {
		t.Errorf("%d mirror pods left, want %d", n, wantMirrors)
	}
	if n := len(m.OrphanedMirrorPodFullNames()); n != writers*10 {
		t.Errorf("%d orphaned full names, want %d", n, writers*10)
	}
}

func TestSetPodsWhileReading(t *testing.T) {
	m := New()
	snap := func(n int) []*corev1.Pod {
		pods := make([]*corev1.Pod, 0, 2*n)
		for i := range n {
			name := fmt.Sprintf("p%d", i)
			pods = append(pods, staticPod("s"+name, "ns", name, "h"), mirrorPod("m"+name, "ns", name, "h"))
		}
		return pods
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 100 {
			m.SetPods(snap(i % 20))
		}
	})
	wg.Go(func() {
		for range 100 {
			pods, mirrors := m.PodsAndMirrorPods()
			// One consistent view: each snapshot has as many pods as mirrors.
			if len(pods) != len(mirrors) {
				t.Errorf("inconsistent view: %d pods, %d mirrors", len(pods), len(mirrors))
				return
			}
		}
	})
	wg.Wait()
}
