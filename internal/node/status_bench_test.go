package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// BenchmarkStatusCheck is the work of one status period with nothing
// changed: measure the machine, compute the status, compare it with the
// last Node. It runs every --node-status-update-frequency on an idle node.
func BenchmarkStatusCheck(b *testing.B) {
	m, err := ReadMachine()
	if err != nil {
		b.Fatal(err)
	}
	n, err := New(Options{Name: "bench", Machine: m, RootDir: b.TempDir(),
		Runtime: &fakeRuntime{health: runtime.Health{RuntimeReady: true, NetworkReady: true}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	base := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	if base.Status, err = n.desiredStatus(ctx, base); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		want, err := n.desiredStatus(ctx, base)
		if err != nil {
			b.Fatal(err)
		}
		if !statusEqual(base.Status, want) {
			b.Fatal("the status changed with nothing changed")
		}
	}
}
