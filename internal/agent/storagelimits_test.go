package agent

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// usageVolumes reports each emptyDir's usage from a table.
type usageVolumes struct {
	fakeVolumes
	used map[string]int64 // by volume name
}

func (u usageVolumes) EmptyDirUsage(_ types.UID, volume string, _ int64) (int64, error) {
	return u.used[volume], nil
}

// A pod whose disk emptyDir holds more than its sizeLimit is evicted once,
// with the kubelet's message and event; a Memory emptyDir, a volume within
// its limit, a critical pod and a finished one are left alone.
func TestStorageLimitsEvict(t *testing.T) {
	limited := func(name string, medium corev1.StorageMedium, limit string) *corev1.Pod {
		q := resource.MustParse(limit)
		pod := apiPod(name, "100m")
		pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium, SizeLimit: &q}}}}
		return pod
	}
	over := limited("over", "", "1Mi")
	within := limited("within", "", "8Mi")
	memory := limited("memory", corev1.StorageMediumMemory, "1Mi")
	static := limited("static", "", "1Mi")
	static.Annotations = map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource)}
	done := limited("done", "", "1Mi")

	pods := podmanager.New()
	for _, p := range []*corev1.Pod{over, within, memory, static, done} {
		pods.AddPod(p)
	}
	statuses := status.NewStore(nil, nil)
	statuses.Set(done, corev1.PodStatus{Phase: corev1.PodSucceeded})
	rec := record.NewFakeRecorder(10)
	var synced []string
	l := &storageLimits{
		pods: pods, statuses: statuses, vols: usageVolumes{used: map[string]int64{"scratch": 4 << 20}}, evictions: newEvictions(),
		events: newPodEvents(rec, "node-1"), timeline: timeline.New(10), log: logr.Discard(),
		sync: func(o podworkers.UpdatePodOptions) { synced = append(synced, o.Pod.Name) },
	}
	// within's 8Mi is above the table's 4 MiB; memory and static are over
	// but never measured; done has ended.
	l.check()
	l.check()
	if strings.Join(synced, ",") != "over" {
		t.Fatalf("synced %v, want over, once", synced)
	}
	want := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	if got := l.evictions.reason(over.UID); got != want {
		t.Errorf("eviction reason %q, want %q", got, want)
	}
	for _, p := range []*corev1.Pod{within, memory, static, done} {
		if got := l.evictions.reason(p.UID); got != "" {
			t.Errorf("%s evicted: %q", p.Name, got)
		}
	}
	select {
	case ev := <-rec.Events:
		if ev != "Warning Evicted "+want {
			t.Errorf("event %q", ev)
		}
	default:
		t.Error("no Evicted event")
	}
	st := status.Generate(status.Input{Pod: over, Evicted: l.evictions.reason(over.UID)})
	if st.Phase != corev1.PodFailed || st.Reason != status.ReasonEvicted || st.Message != want {
		t.Errorf("the evicted pod's status: %s %s %q, want Failed, Evicted, the message", st.Phase, st.Reason, st.Message)
	}
}
