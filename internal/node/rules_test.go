package node

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseThresholds(t *testing.T) {
	ts, err := ParseThresholds(DefaultThresholds)
	if err != nil {
		t.Fatal(err)
	}
	if got := ts.String(); got != "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,pid.available<5%" {
		t.Errorf("String() = %s", got)
	}
	if b := ts.bound(SignalMemoryAvailable, 1<<40); b != 100<<20 {
		t.Errorf("memory bound %d, want 100Mi", b)
	}
	if b := ts.bound(SignalNodeFSAvailable, 1000); b != 100 {
		t.Errorf("nodefs bound %d, want 10%% of 1000", b)
	}
	for in, want := range map[string]string{
		"memory.available":                "want signal<value",
		"cpu.available<1":                 `unknown signal "cpu.available"`,
		"memory.available<-1Mi":           "not a non-negative quantity",
		"nodefs.available<150%":           "must be in (0, 100]",
		"nodefs.inodesFree<1.5":           "must be whole",
		"pid.available<1,pid.available<2": "given twice",
	} {
		if _, err := ParseThresholds(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseThresholds(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestValidateLabels(t *testing.T) {
	for labels, ok := range map[string]bool{
		"example.com/role=edge":                    true,
		"node.kubernetes.io/pool=a":                true, // a namespace the kubelet may set
		"topology.kubernetes.io/zone=z1":           true,
		"node-role.kubernetes.io/worker=":          false, // NodeRestriction refuses it
		"node-restriction.kubernetes.io/secure=1":  false,
		"bad key/x=1":                              false,
		"example.com/v=" + strings.Repeat("x", 64): false,
	} {
		k, v, _ := strings.Cut(labels, "=")
		err := ValidateLabels(map[string]string{k: v})
		if (err == nil) != ok {
			t.Errorf("ValidateLabels(%s) = %v, want ok=%t", labels, err, ok)
		}
	}
}

func TestParseTaints(t *testing.T) {
	got, err := ParseTaints([]string{"dedicated=edge:NoSchedule", "maintenance:NoExecute"})
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.Taint{{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule}, {Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ParseTaints = %v, want %v", got, want)
	}
	for _, bad := range []string{"noeffect", "k=v:Sometimes", "a:NoSchedule,a:NoSchedule"} {
		if _, err := ParseTaints(strings.Split(bad, ",")); err == nil {
			t.Errorf("ParseTaints(%q) accepted", bad)
		}
	}
}

func TestAllocatableSubtractsReservedAndThresholds(t *testing.T) {
	ts, _ := ParseThresholds("memory.available<100Mi,nodefs.available<10%")
	m := Machine{CPUs: 4, MemoryBytes: 8 << 30, HugePages: map[int64]int64{2 << 20: 1 << 30}}
	c := capacity(m, fsStats{capacity: 100 << 30}, 50)
	a := allocatable(c, []corev1.ResourceList{
		{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		{corev1.ResourceCPU: resource.MustParse("5")}, // more than there is: floors at zero
	}, ts)
	check := func(name corev1.ResourceName, want string) {
		t.Helper()
		q := a[name]
		if q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, q.String(), want)
		}
	}
	check(corev1.ResourceCPU, "0")
	check(corev1.ResourceMemory, "6044Mi") // 8Gi - 1Gi reserved - 100Mi threshold - 1Gi huge pages
	check(corev1.ResourceEphemeralStorage, "90Gi")
	check(corev1.ResourcePods, "50")
	check("hugepages-2Mi", "1Gi")
	if q := c[corev1.ResourceMemory]; q.Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("capacity memory = %s", q.String())
	}
}

func TestPressureHoldsForTheTransitionPeriod(t *testing.T) {
	ts, _ := ParseThresholds("memory.available<100Mi,pid.available<100")
	p := newPressures(time.Minute)
	t0 := time.Unix(1000, 0)
	fine := observation{memoryAvailable: 1 << 30, memoryCapacity: 2 << 30, pidsAvailable: 1000, pidsMax: 2000,
		nodefs: fsStats{capacity: 100, available: 100, inodes: 100, inodesFree: 100}}
	fine.imagefs = fine.nodefs
	low := fine
	low.memoryAvailable = 50 << 20

	status := func(conds []corev1.NodeCondition, typ corev1.NodeConditionType) corev1.ConditionStatus {
		for _, c := range conds {
			if c.Type == typ {
				return c.Status
			}
		}
		t.Fatalf("no %s condition", typ)
		return ""
	}
	steps := []struct {
		at   time.Duration
		ob   observation
		want corev1.ConditionStatus
	}{
		{0, fine, corev1.ConditionFalse},
		{10 * time.Second, low, corev1.ConditionTrue},
		{20 * time.Second, fine, corev1.ConditionTrue},  // recovered, held
		{69 * time.Second, fine, corev1.ConditionTrue},  // still within a minute of the last low reading
		{71 * time.Second, fine, corev1.ConditionFalse}, // released
	}
	for _, s := range steps {
		conds := p.conditions(t0.Add(s.at), s.ob, ts)
		if got := status(conds, corev1.NodeMemoryPressure); got != s.want {
			t.Errorf("at %v: MemoryPressure %s, want %s", s.at, got, s.want)
		}
		if got := status(conds, corev1.NodePIDPressure); got != corev1.ConditionFalse {
			t.Errorf("at %v: PIDPressure %s with PIDs to spare", s.at, got)
		}
	}
	few := fine
	few.pidsAvailable = 10
	if got := status(p.conditions(t0, few, ts), corev1.NodePIDPressure); got != corev1.ConditionTrue {
		t.Errorf("PIDPressure %s with 10 PIDs left and a threshold of 100", got)
	}
}
