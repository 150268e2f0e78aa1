package podmanager

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func apiPod(uid, ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: types.UID(uid), Namespace: ns, Name: name,
		Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.APIServerSource)},
	}}
}

func staticPod(uid, ns, name, hash string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: types.UID(uid), Namespace: ns, Name: name,
		Annotations: map[string]string{
			podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource),
			podtypes.ConfigHashAnnotationKey:   hash,
		},
	}}
}

func mirrorPod(uid, ns, name, hash string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: types.UID(uid), Namespace: ns, Name: name,
		Annotations: map[string]string{
			podtypes.ConfigSourceAnnotationKey: string(podtypes.APIServerSource),
			podtypes.ConfigMirrorAnnotationKey: hash,
		},
	}}
}

func uids(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, string(p.UID))
	}
	slices.Sort(out)
	return out
}

func uidOf(pod *corev1.Pod, ok bool) string {
	if !ok {
		return "<none>"
	}
	return string(pod.UID)
}

// state is everything observable about a manager, so that each table row
// states the whole expected outcome rather than a chosen part of it.
type state struct {
	Pods, Mirrors []string
	Orphans       []string
	PodToMirror   map[podtypes.ResolvedPodUID]podtypes.MirrorPodUID
	MirrorToPod   map[podtypes.MirrorPodUID]podtypes.ResolvedPodUID
}

func observe(m *Manager) state {
	pods, mirrors := m.PodsAndMirrorPods()
	orphans := m.OrphanedMirrorPodFullNames()
	slices.Sort(orphans)
	p2m, m2p := m.UIDTranslations()
	return state{Pods: uids(pods), Mirrors: uids(mirrors), Orphans: orphans, PodToMirror: p2m, MirrorToPod: m2p}
}

type step struct {
	op  string // add, update, remove, set
	pod *corev1.Pod
	set []*corev1.Pod
}

func apply(m *Manager, steps []step) {
	for _, s := range steps {
		switch s.op {
		case "add":
			m.AddPod(s.pod)
		case "update":
			m.UpdatePod(s.pod)
		case "remove":
			m.RemovePod(s.pod)
		case "set":
			m.SetPods(s.set)
		default:
			panic("unknown op " + s.op)
		}
	}
}

func TestManagerState(t *testing.T) {
	static := staticPod("s1", "kube-system", "etcd-n1", "h1")
	static2 := staticPod("s2", "kube-system", "etcd-n1", "h2") // the edited manifest
	mirror := mirrorPod("m1", "kube-system", "etcd-n1", "h1")
	mirror2 := mirrorPod("m2", "kube-system", "etcd-n1", "h1") // re-created mirror
	regular := apiPod("a1", "default", "web")
	orphan := mirrorPod("m9", "default", "gone-n1", "h9")

	type p2m = map[podtypes.ResolvedPodUID]podtypes.MirrorPodUID
	type m2p = map[podtypes.MirrorPodUID]podtypes.ResolvedPodUID
	tests := []struct {
		name  string
		steps []step
		want  state
	}{
		{
			name: "empty",
			want: state{Pods: []string{}, Mirrors: []string{}, PodToMirror: p2m{}, MirrorToPod: m2p{}},
		},
		{
			name:  "static pod then its mirror",
			steps: []step{{op: "add", pod: static}, {op: "add", pod: mirror}},
			want:  state{Pods: []string{"s1"}, Mirrors: []string{"m1"}, PodToMirror: p2m{"s1": "m1"}, MirrorToPod: m2p{"m1": "s1"}},
		},
		{
			name:  "mirror then its static pod",
			steps: []step{{op: "add", pod: mirror}, {op: "add", pod: static}},
			want:  state{Pods: []string{"s1"}, Mirrors: []string{"m1"}, PodToMirror: p2m{"s1": "m1"}, MirrorToPod: m2p{"m1": "s1"}},
		},
		{
			name:  "static pod without mirror maps to empty",
			steps: []step{{op: "add", pod: static}, {op: "add", pod: regular}},
			want:  state{Pods: []string{"a1", "s1"}, Mirrors: []string{}, PodToMirror: p2m{"s1": ""}, MirrorToPod: m2p{}},
		},
		{
			name:  "mirror alone is an orphan",
			steps: []step{{op: "add", pod: mirror}},
			want:  state{Pods: []string{}, Mirrors: []string{"m1"}, Orphans: []string{"etcd-n1_kube-system"}, PodToMirror: p2m{}, MirrorToPod: m2p{}},
		},
		{
			name:  "removing the mirror keeps the static pod",
			steps: []step{{op: "add", pod: static}, {op: "add", pod: mirror}, {op: "remove", pod: mirror}},
			want:  state{Pods: []string{"s1"}, Mirrors: []string{}, PodToMirror: p2m{"s1": ""}, MirrorToPod: m2p{}},
		},
		{
			name:  "removing the static pod orphans its mirror",
			steps: []step{{op: "add", pod: static}, {op: "add", pod: mirror}, {op: "remove", pod: static}},
			want:  state{Pods: []string{}, Mirrors: []string{"m1"}, Orphans: []string{"etcd-n1_kube-system"}, PodToMirror: p2m{}, MirrorToPod: m2p{}},
		},
		{
			name: "mirror deleted then re-created with a new UID",
			steps: []step{
				{op: "add", pod: static}, {op: "add", pod: mirror},
				{op: "remove", pod: mirror}, {op: "add", pod: mirror2},
			},
			want: state{Pods: []string{"s1"}, Mirrors: []string{"m2"}, PodToMirror: p2m{"s1": "m2"}, MirrorToPod: m2p{"m2": "s1"}},
		},
		{
			name: "late delete of the old mirror leaves the re-created one",
			steps: []step{
				{op: "add", pod: static}, {op: "add", pod: mirror},
				{op: "add", pod: mirror2}, {op: "remove", pod: mirror},
			},
			want: state{Pods: []string{"s1"}, Mirrors: []string{"m2"}, PodToMirror: p2m{"s1": "m2"}, MirrorToPod: m2p{"m2": "s1"}},
		},
		{
			name: "edited static pod: old one removed after the new one arrived",
			steps: []step{
				{op: "add", pod: static}, {op: "add", pod: mirror},
				{op: "add", pod: static2}, {op: "remove", pod: static},
			},
			want: state{Pods: []string{"s2"}, Mirrors: []string{"m1"}, PodToMirror: p2m{"s2": "m1"}, MirrorToPod: m2p{"m1": "s2"}},
		},
		{
			name:  "two static pods share a name: both map to the mirror, the mirror to the latest",
			steps: []step{{op: "add", pod: static}, {op: "add", pod: static2}, {op: "add", pod: mirror}},
			want:  state{Pods: []string{"s1", "s2"}, Mirrors: []string{"m1"}, PodToMirror: p2m{"s1": "m1", "s2": "m1"}, MirrorToPod: m2p{"m1": "s2"}},
		},
		{
			name:  "removing an unknown pod changes nothing",
			steps: []step{{op: "add", pod: static}, {op: "remove", pod: static2}, {op: "remove", pod: mirror}},
			want:  state{Pods: []string{"s1"}, Mirrors: []string{}, PodToMirror: p2m{"s1": ""}, MirrorToPod: m2p{}},
		},
		{
			name: "set replaces the whole state",
			steps: []step{
				{op: "add", pod: static}, {op: "add", pod: mirror},
				{op: "set", set: []*corev1.Pod{regular, orphan}},
			},
			want: state{Pods: []string{"a1"}, Mirrors: []string{"m9"}, Orphans: []string{"gone-n1_default"}, PodToMirror: p2m{}, MirrorToPod: m2p{}},
		},
		{
			name:  "set with nothing empties the manager",
			steps: []step{{op: "add", pod: static}, {op: "add", pod: orphan}, {op: "set"}},
			want:  state{Pods: []string{}, Mirrors: []string{}, PodToMirror: p2m{}, MirrorToPod: m2p{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			apply(m, tt.steps)
			if diff := cmp.Diff(tt.want, observe(m)); diff != "" {
				t.Errorf("state mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLookups(t *testing.T) {
	static := staticPod("s1", "kube-system", "etcd-n1", "h1")
	mirror := mirrorPod("m1", "kube-system", "etcd-n1", "h1")
	regular := apiPod("a1", "default", "web")
	m := New()
	m.SetPods([]*corev1.Pod{static, mirror, regular})

	tests := []struct {
		name string
		got  string
		want string
	}{
		{"PodByUID static", uidOf(m.PodByUID("s1")), "s1"},
		{"PodByUID regular", uidOf(m.PodByUID("a1")), "a1"},
		{"PodByUID of a mirror finds nothing", uidOf(m.PodByUID("m1")), "<none>"},
		{"PodByUID unknown", uidOf(m.PodByUID("zz")), "<none>"},
		{"PodByFullName", uidOf(m.PodByFullName("etcd-n1_kube-system")), "s1"},
		{"PodByFullName unknown", uidOf(m.PodByFullName("etcd-n2_kube-system")), "<none>"},
		{"PodByName", uidOf(m.PodByName("default", "web")), "a1"},
		{"PodByName wrong namespace", uidOf(m.PodByName("kube-system", "web")), "<none>"},
		{"MirrorPodByPod", uidOf(m.MirrorPodByPod(static)), "m1"},
		{"MirrorPodByPod none", uidOf(m.MirrorPodByPod(regular)), "<none>"},
		{"PodByMirrorPod", uidOf(m.PodByMirrorPod(mirror)), "s1"},
		{"PodByMirrorPod orphan", uidOf(m.PodByMirrorPod(mirrorPod("m9", "x", "y", "h"))), "<none>"},
		{"TranslatePodUID mirror", string(m.TranslatePodUID("m1")), "s1"},
		{"TranslatePodUID static", string(m.TranslatePodUID("s1")), "s1"},
		{"TranslatePodUID unknown", string(m.TranslatePodUID("zz")), "zz"},
		{"TranslatePodUID empty", string(m.TranslatePodUID("")), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if got := uids(m.Pods()); !slices.Equal(got, []string{"a1", "s1"}) {
		t.Errorf("Pods() = %v", got)
	}
	if got := uids(m.MirrorPods()); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("MirrorPods() = %v", got)
	}
}

func TestTranslateOrphanedMirrorReturnsItself(t *testing.T) {
	m := New()
	m.AddPod(mirrorPod("m1", "kube-system", "etcd-n1", "h1"))
	if got := m.TranslatePodUID("m1"); got != "m1" {
		t.Fatalf("TranslatePodUID(orphan mirror) = %q, want m1", got)
	}
}

func TestUpdateReplacesByUID(t *testing.T) {
	m := New()
	v1 := apiPod("a1", "default", "web")
	v2 := v1.DeepCopy()
	v2.Labels = map[string]string{"v": "2"}
	m.AddPod(v1)
	m.UpdatePod(v2)
	got, ok := m.PodByUID("a1")
	if !ok || got != v2 {
		t.Fatalf("PodByUID after update = %v, %v; want the updated object", got, ok)
	}
	if got, _ := m.PodByFullName("web_default"); got != v2 {
		t.Fatalf("PodByFullName after update returned the old object")
	}
	if n := len(m.Pods()); n != 1 {
		t.Fatalf("Pods() has %d pods after update, want 1", n)
	}
}

func TestIsMirrorPodOf(t *testing.T) {
	static := staticPod("s1", "kube-system", "etcd-n1", "h1")
	tests := []struct {
		name   string
		mirror *corev1.Pod
		want   bool
	}{
		{"same name, namespace and hash", mirrorPod("m1", "kube-system", "etcd-n1", "h1"), true},
		{"outdated hash", mirrorPod("m1", "kube-system", "etcd-n1", "h0"), false},
		{"other name", mirrorPod("m1", "kube-system", "etcd-n2", "h1"), false},
		{"other namespace", mirrorPod("m1", "default", "etcd-n1", "h1"), false},
		{"not a mirror", apiPod("a1", "kube-system", "etcd-n1"), false},
	}
	for _, tt := range tests {
		if got := IsMirrorPodOf(tt.mirror, static); got != tt.want {
			t.Errorf("%s: IsMirrorPodOf = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsCurrentMirrorOf(t *testing.T) {
	static := staticPod("s1", "kube-system", "etcd-n1", "h1")
	current := mirrorPod("m1", "kube-system", "etcd-n1", "h1")
	deleting := current.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tt := range []struct {
		name   string
		mirror *corev1.Pod
		want   bool
	}{
		{"this version", current, true},
		{"this version, being deleted", deleting, false},
		{"outdated hash", mirrorPod("m1", "kube-system", "etcd-n1", "h0"), false},
	} {
		if got := IsCurrentMirrorOf(tt.mirror, static); got != tt.want {
			t.Errorf("%s: IsCurrentMirrorOf = %v, want %v", tt.name, got, tt.want)
		}
	}
}
