package cgroups

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func testPod(uid types.UID, cs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Spec: corev1.PodSpec{Containers: cs}}
}

// fakeV1 is a cgroup v1 mount point with the cpu and memory hierarchies.
func fakeV1(t *testing.T) string {
	root := t.TempDir()
	for _, h := range []string{"cpu", "memory", "pids"} {
		if err := os.Mkdir(filepath.Join(root, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fakeV2 is a cgroup v2 mount point.
func fakeV2(t *testing.T) string {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// files reads the named files under dir; a missing one reads as "-".
func files(t *testing.T, dir string, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		switch {
		case errors.Is(err, os.ErrNotExist):
			out[n] = "-"
		case err != nil:
			t.Fatal(err)
		default:
			out[n] = strings.TrimSpace(string(b))
		}
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

var (
	guaranteed = testPod("g1", ctr("a", "500m", "64Mi", "500m", "64Mi"))
	burstable1 = testPod("b1", ctr("a", "250m", "16Mi", "", ""))
	burstable2 = testPod("b2", ctr("a", "500m", "", "1", "32Mi"))
	bestEffort = testPod("e1", ctr("a", "", "", "", ""))
)

func TestV1Files(t *testing.T) {
	fs := fakeV1(t)
	m := newManager(Options{Root: "/nodeagent", FS: fs})
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{guaranteed, burstable1, burstable2, bestEffort} {
		if err := m.EnsurePod(p); err != nil {
			t.Fatalf("EnsurePod %s: %v", p.UID, err)
		}
	}
	cpu, mem := filepath.Join(fs, "cpu", "nodeagent", "kubepods"), filepath.Join(fs, "memory", "nodeagent", "kubepods")
	for _, tc := range []struct {
		dir  string
		want map[string]string
	}{
		{filepath.Join(cpu, "besteffort"), map[string]string{"cpu.shares": "2"}},
		{filepath.Join(cpu, "burstable"), map[string]string{"cpu.shares": "768"}}, // 250m + 500m
		{filepath.Join(cpu, "podg1"), map[string]string{"cpu.shares": "512", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "50000"}},
		{filepath.Join(mem, "podg1"), map[string]string{"memory.limit_in_bytes": "67108864"}},
		{filepath.Join(cpu, "burstable", "podb1"), map[string]string{"cpu.shares": "256", "cpu.cfs_period_us": "-", "cpu.cfs_quota_us": "-"}},
		{filepath.Join(mem, "burstable", "podb1"), map[string]string{"memory.limit_in_bytes": "-"}},
		{filepath.Join(cpu, "burstable", "podb2"), map[string]string{"cpu.shares": "512", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000"}},
		{filepath.Join(mem, "burstable", "podb2"), map[string]string{"memory.limit_in_bytes": "33554432"}},
		{filepath.Join(cpu, "besteffort", "pode1"), map[string]string{"cpu.shares": "2", "cpu.cfs_quota_us": "-"}},
		{filepath.Join(mem, "besteffort", "pode1"), map[string]string{"memory.limit_in_bytes": "-"}},
	} {
		var names []string
		for n := range tc.want {
			names = append(names, n)
		}
		if got := files(t, tc.dir, names...); !equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", strings.TrimPrefix(tc.dir, fs), got, tc.want)
		}
	}
	// Limits go only where they apply; the runtime makes the rest.
	if _, err := os.Stat(filepath.Join(fs, "pids", "nodeagent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pids hierarchy: %v, want nothing made there", err)
	}
}

func TestV2Files(t *testing.T) {
	fs := fakeV2(t)
	m := newManager(Options{Root: "/nodeagent", FS: fs})
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{guaranteed, burstable1, bestEffort} {
		if err := m.EnsurePod(p); err != nil {
			t.Fatalf("EnsurePod %s: %v", p.UID, err)
		}
	}
	kp := filepath.Join(fs, "nodeagent", "kubepods")
	for _, tc := range []struct {
		dir  string
		want map[string]string
	}{
		{fs, map[string]string{"cgroup.subtree_control": "+cpu +memory"}},
		{filepath.Join(fs, "nodeagent"), map[string]string{"cgroup.subtree_control": "+cpu +memory"}},
		{kp, map[string]string{"cgroup.subtree_control": "+cpu +memory"}},
		{filepath.Join(kp, "burstable"), map[string]string{"cgroup.subtree_control": "+cpu +memory", "cpu.weight": "10"}}, // 256 shares
		{filepath.Join(kp, "besteffort"), map[string]string{"cpu.weight": "1"}},
		{filepath.Join(kp, "podg1"), map[string]string{"cpu.weight": "20", "cpu.max": "50000 100000", "memory.max": "67108864"}},
		{filepath.Join(kp, "burstable", "podb1"), map[string]string{"cpu.weight": "10", "cpu.max": "-", "memory.max": "-"}},
		{filepath.Join(kp, "besteffort", "pode1"), map[string]string{"cpu.weight": "1", "memory.max": "-"}},
	} {
		var names []string
		for n := range tc.want {
			names = append(names, n)
		}
		if got := files(t, tc.dir, names...); !equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", strings.TrimPrefix(tc.dir, fs), got, tc.want)
		}
	}
}

func TestBurstableSharesFollowThePods(t *testing.T) {
	fs := fakeV1(t)
	m := newManager(Options{Root: "/nodeagent", FS: fs})
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	shares := func() string {
		t.Helper()
		return files(t, filepath.Join(fs, "cpu", "nodeagent", "kubepods", "burstable"), "cpu.shares")["cpu.shares"]
	}
	ctx := context.Background()
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"no Burstable pod: the fewest", func() error { return nil }, "2"},
		{"a pod found running counts", func() error { return m.TrackPod(burstable1) }, "256"},
		{"a Guaranteed pod does not", func() error { return m.TrackPod(guaranteed) }, "256"},
		{"a second Burstable pod adds", func() error { return m.TrackPod(burstable2) }, "768"},
		{"counted once", func() error { return m.TrackPod(burstable2) }, "768"},
		{"a removed pod subtracts", func() error { return m.RemovePod(ctx, "b1") }, "512"},
		{"the last one gone", func() error { return m.RemovePod(ctx, "b2") }, "2"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := shares(); got != s.want {
			t.Errorf("%s: burstable cpu.shares = %s, want %s", s.name, got, s.want)
		}
	}
}

func TestRemovePod(t *testing.T) {
	for _, tc := range []struct {
		name    string
		driver  Driver
		present []string // directories below the mount point
		gone    []string
		kept    []string
	}{{
		name: "every class and the flat layout of earlier versions",
		present: []string{
			"cpu/nodeagent/podu1/c1", "memory/nodeagent/podu1", // before the QoS tree
			"cpu/nodeagent/kubepods/podu1/c1", "memory/nodeagent/kubepods/podu1",
			"cpu/nodeagent/kubepods/burstable/podu1/c1", "pids/nodeagent/kubepods/burstable/podu1",
			"cpu/nodeagent/kubepods/besteffort/podu1",
			"cpu/nodeagent/kubepods/burstable/podu2/c1", "cpu/nodeagent/podu2",
		},
		gone: []string{
			"cpu/nodeagent/podu1", "memory/nodeagent/podu1",
			"cpu/nodeagent/kubepods/podu1", "memory/nodeagent/kubepods/podu1",
			"cpu/nodeagent/kubepods/burstable/podu1", "pids/nodeagent/kubepods/burstable/podu1",
			"cpu/nodeagent/kubepods/besteffort/podu1",
		},
		kept: []string{
			"cpu/nodeagent/kubepods/burstable", "cpu/nodeagent/kubepods/besteffort",
			"cpu/nodeagent/kubepods/burstable/podu2/c1", "cpu/nodeagent/podu2",
		},
	}, {
		name:   "systemd slices",
		driver: DriverSystemd,
		present: []string{
			"cpu/nodeagent.slice/nodeagent-kubepods.slice/nodeagent-kubepods-burstable.slice/nodeagent-kubepods-burstable-podu1.slice/c1",
			"cpu/nodeagent.slice/nodeagent-kubepods.slice/nodeagent-kubepods-podu2.slice",
		},
		gone: []string{"cpu/nodeagent.slice/nodeagent-kubepods.slice/nodeagent-kubepods-burstable.slice/nodeagent-kubepods-burstable-podu1.slice"},
		kept: []string{
			"cpu/nodeagent.slice/nodeagent-kubepods.slice/nodeagent-kubepods-burstable.slice",
			"cpu/nodeagent.slice/nodeagent-kubepods.slice/nodeagent-kubepods-podu2.slice",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := t.TempDir()
			for _, d := range tc.present {
				if err := os.MkdirAll(filepath.Join(fs, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			m := newManager(Options{Root: "/nodeagent", FS: fs, Driver: tc.driver})
			if err := m.RemovePod(context.Background(), "u1"); err != nil {
				t.Fatalf("RemovePod: %v", err)
			}
			for _, d := range tc.gone {
				if _, err := os.Stat(filepath.Join(fs, d)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: %v, want it removed", d, err)
				}
			}
			for _, d := range tc.kept {
				if _, err := os.Stat(filepath.Join(fs, d)); err != nil {
					t.Errorf("%s: %v, want it kept", d, err)
				}
			}
		})
	}
}

func TestSystemdRefusedWithoutSystemd(t *testing.T) {
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Skip("systemd runs here")
	}
	if _, err := New(Options{Driver: DriverSystemd, FS: t.TempDir()}); !errors.Is(err, ErrNoSystemd) {
		t.Errorf("New with the systemd driver: %v, want ErrNoSystemd", err)
	}
	if _, err := New(Options{FS: t.TempDir()}); err != nil {
		t.Errorf("New with cgroupfs: %v", err)
	}
}

// A driver the kubelet does not know is refused, never taken for cgroupfs.
func TestUnknownDriverRefused(t *testing.T) {
	_, err := New(Options{Driver: "cgroupv2", FS: t.TempDir()})
	if !errors.Is(err, ErrUnknownDriver) || !strings.Contains(err.Error(), `"cgroupv2"`) {
		t.Errorf("New with driver cgroupv2: %v, want ErrUnknownDriver naming it", err)
	}
}

// A pod started by an earlier version, in the flat <root>/pod<uid>, stays
// there until it is removed: its containers join its sandbox's cgroup. A
// pod found without one is not looked up again: only an earlier version,
// before the agent started, makes such a cgroup.
func TestPodOfEarlierLayoutStaysInIt(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fs          func(*testing.T) string
		flat, flat2 string // the old cgroups of burstable1 and 2, below the mount point
	}{
		{"v1", fakeV1, "memory/nodeagent/podb1", "memory/nodeagent/podb2"},
		{"v2", fakeV2, "nodeagent/podb1", "nodeagent/podb2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := tc.fs(t)
			if err := os.MkdirAll(filepath.Join(fs, tc.flat), 0o755); err != nil {
				t.Fatal(err)
			}
			m := newManager(Options{Root: "/nodeagent", FS: fs})
			if got, want := m.PodParent(burstable2), "/nodeagent/kubepods/burstable/podb2"; got != want {
				t.Errorf("PodParent of a new pod = %s, want %s", got, want)
			}
			if err := os.MkdirAll(filepath.Join(fs, tc.flat2), 0o755); err != nil {
				t.Fatal(err)
			}
			if got, want := m.PodParent(burstable2), "/nodeagent/kubepods/burstable/podb2"; got != want {
				t.Errorf("PodParent of a pod found in the QoS tree, asked again = %s, want %s (it is not looked up again)", got, want)
			}
			if err := m.RemovePod(context.Background(), burstable2.UID); err != nil {
				t.Fatal(err)
			}
			m.treeMu.Lock()
			kept := m.inTree[burstable2.UID]
			m.treeMu.Unlock()
			if kept {
				t.Error("RemovePod left the pod in the memo of pods in the QoS tree")
			}
			if got, want := m.PodParent(burstable1), "/nodeagent/podb1"; got != want {
				t.Errorf("PodParent of an old pod = %s, want %s", got, want)
			}
			if err := m.EnsurePod(burstable1); err != nil {
				t.Fatal(err)
			}
			dirs, _ := filepath.Glob(filepath.Join(fs, "*", "nodeagent", "kubepods", "burstable", "podb1"))
			dirs2, _ := filepath.Glob(filepath.Join(fs, "nodeagent", "kubepods", "burstable", "podb1"))
			if len(dirs)+len(dirs2) > 0 {
				t.Errorf("EnsurePod made %v for a pod of the earlier layout", append(dirs, dirs2...))
			}
		})
	}
}
