package podworkers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestGracePeriod(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	withSpec := func(g *int64) *corev1.Pod { return &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: g}} }
	deleting := func(g int64) *corev1.Pod { p := withSpec(i(60)); p.DeletionGracePeriodSeconds = &g; return p }
	tests := []struct {
		name     string
		current  int64 // in force if not -1
		pod      *corev1.Pod
		override *int64
		want     int64
	}{
		{"spec", -1, withSpec(i(45)), nil, 45},
		{"no spec: the API default", -1, withSpec(nil), nil, 30},
		{"no pod: the API default", -1, nil, nil, 30},
		{"override below spec", -1, withSpec(i(45)), i(10), 10},
		{"override above spec still wins first", -1, withSpec(i(45)), i(90), 90},
		{"deletion grace", -1, deleting(20), nil, 20},
		{"shortest of deletion and override", -1, deleting(20), i(5), 5},
		{"never lengthened", 10, deleting(20), i(30), 10},
		{"shortened", 10, withSpec(i(45)), i(3), 3},
		{"zero stops at once", -1, withSpec(i(45)), i(0), 0},
		{"zero in the spec", -1, withSpec(i(0)), nil, 0},
		{"zero in force is never lengthened", 0, withSpec(i(45)), i(5), 0},
		{"negative is zero", 10, nil, i(-5), 0},
	}
	for _, tt := range tests {
		if got := gracePeriod(max(tt.current, 0), tt.current >= 0, tt.pod, tt.override); got != tt.want {
			t.Errorf("%s: gracePeriod = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestChainStatusAppliesInOrder(t *testing.T) {
	var st corev1.PodStatus
	chainStatus(nil)(&st) // a no-op, never nil
	chainStatus([]func(*corev1.PodStatus){
		func(s *corev1.PodStatus) { s.Reason, s.Message = "Preempted", "first" },
		func(s *corev1.PodStatus) { s.Reason = "Evicted" },
	})(&st)
	if st.Reason != "Evicted" || st.Message != "first" {
		t.Errorf("status = %q %q, want the later kill's reason over the earlier kill's message", st.Reason, st.Message)
	}
}

func TestPodUpdateMergeKeepsWhatIsMissing(t *testing.T) {
	spec1, spec2 := specV(1), specV(2)
	rt, rt2 := &RuntimePod{UID: "a"}, &RuntimePod{UID: "b"}
	tests := []struct {
		name         string
		older, newer podUpdate
		want         podUpdate
	}{
		{"newer spec, runtime pod kept", podUpdate{Create, spec1, rt}, podUpdate{Update, spec2, nil}, podUpdate{Update, spec2, rt}},
		{"a kill without spec keeps the spec", podUpdate{Update, spec1, nil}, podUpdate{Kill, nil, rt}, podUpdate{Kill, spec1, rt}},
		{"everything new", podUpdate{Create, spec1, rt}, podUpdate{Sync, spec2, rt2}, podUpdate{Sync, spec2, rt2}},
	}
	for _, tt := range tests {
		got := tt.older.merge(tt.newer)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(podUpdate{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
