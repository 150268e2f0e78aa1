package nodeapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func TestSummary(t *testing.T) {
	w := newWorld(t, nil)
	code, body := w.do("GET", "/stats/summary", "alice-token")
	if code != http.StatusOK {
		t.Fatalf("/stats/summary: %d %q", code, body)
	}
	var sum statsv1alpha1.Summary
	if err := json.Unmarshal([]byte(body), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Node.NodeName != "node-1" || *sum.Node.CPU.UsageCoreNanoSeconds != uint64(90*time.Second) || *sum.Node.Memory.WorkingSetBytes != 3<<30 {
		t.Errorf("node %+v", sum.Node)
	}
	if len(sum.Pods) != 1 {
		t.Fatalf("pods %+v", sum.Pods)
	}
	p := sum.Pods[0]
	if p.PodRef != (statsv1alpha1.PodReference{Name: "web", Namespace: "default", UID: "uid-1"}) || len(p.Containers) != 2 ||
		*p.CPU.UsageCoreNanoSeconds != uint64(2*time.Second) || *p.Memory.WorkingSetBytes != 2<<20 || p.CPU.UsageNanoCores != nil {
		t.Errorf("pod %+v", p)
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	if last := w.rv.sars[len(w.rv.sars)-1]; last.Subresource != "stats" {
		t.Errorf("authorized as nodes/%s, want nodes/stats", last.Subresource)
	}
}

func TestCPURates(t *testing.T) {
	var c cpuRates
	t0 := time.Unix(1000, 0)
	seen := map[string]bool{}
	if st := c.cpu("a", time.Second, t0, seen); st.UsageNanoCores != nil || *st.UsageCoreNanoSeconds != 1e9 {
		t.Errorf("first sample %+v, want no rate", st)
	}
	// Half a core over 2 s.
	if st := c.cpu("a", 2*time.Second, t0.Add(2*time.Second), seen); st.UsageNanoCores == nil || *st.UsageNanoCores != 5e8 {
		t.Errorf("second sample %+v, want 0.5 cores", st)
	}
	// The same sample again: no rate over no time.
	if st := c.cpu("a", 2*time.Second, t0.Add(2*time.Second), seen); st.UsageNanoCores != nil {
		t.Errorf("a repeated sample %+v, want no rate", st)
	}
	c.forgetUnseen(map[string]bool{})
	if len(c.last) != 0 {
		t.Errorf("samples of what is gone are kept: %v", c.last)
	}
}
