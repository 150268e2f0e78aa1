package node

import (
	"strings"
	"testing"

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

// Each pressure condition is True while one of its signals is met, with
// the signals named, and while one is held after it recovered.
func TestPressureConditions(t *testing.T) {
	status := func(conds []corev1.NodeCondition, typ corev1.NodeConditionType) (corev1.ConditionStatus, string) {
		for _, c := range conds {
			if c.Type == typ {
				return c.Status, c.Message
			}
		}
		t.Fatalf("no %s condition", typ)
		return "", ""
	}
	conds := pressureConditions(map[string]bool{eviction.SignalAllocatableMemoryAvailable: true, eviction.SignalImageFSAvailable: false})
	if st, msg := status(conds, corev1.NodeMemoryPressure); st != corev1.ConditionTrue || !strings.Contains(msg, "allocatableMemory.available below its threshold") {
		t.Errorf("MemoryPressure %s %q", st, msg)
	}
	if st, msg := status(conds, corev1.NodeDiskPressure); st != corev1.ConditionTrue || !strings.Contains(msg, "recovered, held") {
		t.Errorf("DiskPressure %s %q", st, msg)
	}
	if st, _ := status(conds, corev1.NodePIDPressure); st != corev1.ConditionFalse {
		t.Errorf("PIDPressure %s with no PID signal under pressure", st)
	}
	if st, _ := status(pressureConditions(nil), corev1.NodeMemoryPressure); st != corev1.ConditionFalse {
		t.Errorf("MemoryPressure %s without pressure", st)
	}
}
