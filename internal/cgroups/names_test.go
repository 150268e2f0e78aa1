package cgroups

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodParent(t *testing.T) {
	const uid = "0d4a-11ef-9c3e"
	pod := func(class corev1.PodQOSClass) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: corev1.PodStatus{QOSClass: class}}
	}
	for _, tc := range []struct {
		root   string
		driver Driver
		class  corev1.PodQOSClass
		want   string
	}{
		{"/nodeagent", DriverCgroupfs, corev1.PodQOSGuaranteed, "/nodeagent/kubepods/pod0d4a-11ef-9c3e"},
		{"/nodeagent", DriverCgroupfs, corev1.PodQOSBurstable, "/nodeagent/kubepods/burstable/pod0d4a-11ef-9c3e"},
		{"/nodeagent", DriverCgroupfs, corev1.PodQOSBestEffort, "/nodeagent/kubepods/besteffort/pod0d4a-11ef-9c3e"},
		{"/", DriverCgroupfs, corev1.PodQOSBurstable, "/kubepods/burstable/pod0d4a-11ef-9c3e"},
		{"/a/b/", DriverCgroupfs, corev1.PodQOSGuaranteed, "/a/b/kubepods/pod0d4a-11ef-9c3e"},
		// The kubelet's slices under its default root.
		{"/", DriverSystemd, corev1.PodQOSGuaranteed, "/kubepods.slice/kubepods-pod0d4a_11ef_9c3e.slice"},
		{"/", DriverSystemd, corev1.PodQOSBurstable,
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0d4a_11ef_9c3e.slice"},
		{"/", DriverSystemd, corev1.PodQOSBestEffort,
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0d4a_11ef_9c3e.slice"},
		{"/node-agent", DriverSystemd, corev1.PodQOSBurstable,
			"/node_agent.slice/node_agent-kubepods.slice/node_agent-kubepods-burstable.slice/node_agent-kubepods-burstable-pod0d4a_11ef_9c3e.slice"},
	} {
		m := newManager(Options{Root: tc.root, Driver: tc.driver, FS: t.TempDir()})
		if got := m.PodParent(pod(tc.class)); got != tc.want {
			t.Errorf("%s, %s, %s: PodParent = %s, want %s", tc.root, tc.driver, tc.class, got, tc.want)
		}
	}
}

func TestIsPodCgroup(t *testing.T) {
	for base, want := range map[string]bool{
		"podu1":                           true,
		"pod":                             false,
		"kubepods":                        false,
		"burstable":                       false,
		"kubepods-burstable-podu_1.slice": true,
		"kubepods-podu_1.slice":           true,
		"kubepods-burstable.slice":        false,
		"kubepods.slice":                  false,
		"pod.slice":                       false,
		"kubepods-pod.slice":              false,
		"nodeagent-kubepods-besteffort-pod1.slice": true,
	} {
		if got := isPodCgroup(base); got != want {
			t.Errorf("isPodCgroup(%q) = %v, want %v", base, got, want)
		}
	}
}
