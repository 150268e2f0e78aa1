package node

import (
	"strings"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/internal/eviction"
	"github.com/nodeagent/nodeagent/internal/host"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

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
	ts, _ := eviction.ParseThresholds("memory.available<100Mi,nodefs.available<10%")
	m := Machine{CPUs: 4, MemoryBytes: 8 << 30, HugePages: map[int64]int64{2 << 20: 1 << 30}}
	c := capacity(m, host.FSStats{Capacity: 100 << 30}, 50)
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
	p := newPressures(time.Minute)
	t0 := time.Unix(1000, 0)
	status := func(conds []corev1.NodeCondition, typ corev1.NodeConditionType) corev1.ConditionStatus {
		for _, c := range conds {
			if c.Type == typ {
				return c.Status
			}
		}
		t.Fatalf("no %s condition", typ)
		return ""
	}
	low := []string{eviction.SignalAllocatableMemoryAvailable}
	steps := []struct {
		at   time.Duration
		met  []string
		want corev1.ConditionStatus
	}{
		{0, nil, corev1.ConditionFalse},
		{10 * time.Second, low, corev1.ConditionTrue},
		{20 * time.Second, nil, corev1.ConditionTrue},  // recovered, held
		{69 * time.Second, nil, corev1.ConditionTrue},  // still within a minute of the last low reading
		{71 * time.Second, nil, corev1.ConditionFalse}, // released
	}
	for _, s := range steps {
		conds := p.conditions(t0.Add(s.at), s.met)
		if got := status(conds, corev1.NodeMemoryPressure); got != s.want {
			t.Errorf("at %v: MemoryPressure %s, want %s", s.at, got, s.want)
		}
		if got := status(conds, corev1.NodePIDPressure); got != corev1.ConditionFalse {
			t.Errorf("at %v: PIDPressure %s with PIDs to spare", s.at, got)
		}
	}
	if got := status(p.conditions(t0, []string{eviction.SignalPIDAvailable}), corev1.NodePIDPressure); got != corev1.ConditionTrue {
		t.Errorf("PIDPressure %s with pid.available met", got)
	}
}
