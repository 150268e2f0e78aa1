package apisync

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

func TestMirrorCollectorReportsEachStaticPodsMirror(t *testing.T) {
	mirrors := map[*corev1.Pod]*Mirror{}
	pod := func(name string, m *Mirror) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		mirrors[p] = m
		return p
	}
	pods := []*corev1.Pod{
		pod("synced", &Mirror{UID: "m1", Synced: true, StatusSynced: true}),
		pod("writing", &Mirror{UID: "m2", Synced: true}),
		pod("missing", &Mirror{Problem: "last attempt failed: connection refused"}),
		pod("refused", &Mirror{Problem: "spec.serviceAccountName: ...", NotMirrorable: true}),
		pod("api-pod", nil),
	}
	reg := metrics.NewKubeRegistry()
	reg.CustomMustRegister(&mirrorCollector{pods: func() []*corev1.Pod { return pods }, mirror: func(p *corev1.Pod) *Mirror { return mirrors[p] }})
	want := `
# HELP nodeagent_static_pod_mirror [ALPHA] ` + mirrorHelp + `
# TYPE nodeagent_static_pod_mirror gauge
nodeagent_static_pod_mirror{mirror_uid="",namespace="ns",pod="missing",state="missing"} 1
nodeagent_static_pod_mirror{mirror_uid="",namespace="ns",pod="refused",state="not_mirrorable"} 1
nodeagent_static_pod_mirror{mirror_uid="m1",namespace="ns",pod="synced",state="synced"} 1
nodeagent_static_pod_mirror{mirror_uid="m2",namespace="ns",pod="writing",state="status_pending"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nodeagent_static_pod_mirror"); err != nil {
		t.Fatal(err)
	}
}
