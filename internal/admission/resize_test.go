package admission

import (
	"testing"
)

// A resize is given when it fits beside the other pods' allocations,
// Deferred when it fits the node but not beside them, Infeasible when the
// pod alone asks more than the node has or resizes an init container.
func TestAdmitResize(t *testing.T) {
	node := testNode(list("cpu", "2", "memory", "1Gi", "pods", "10"))
	for _, tc := range []struct {
		name        string
		want        Result
		pod         []string // cpu, memory the resized pod asks
		others      []string
		initChanged []string
	}{
		{name: "fits", pod: []string{"1", "512Mi"}, others: []string{"500m", "256Mi"}},
		{name: "fits exactly", pod: []string{"1500m", "768Mi"}, others: []string{"500m", "256Mi"}},
		{name: "cpu held by the others: Deferred", pod: []string{"1600m", "256Mi"}, others: []string{"500m", "256Mi"},
			want: Result{Reason: "Deferred", Message: "Node didn't have enough resource: cpu, requested: 1600, used: 500, capacity: 2000"}},
		{name: "memory held by the others: Deferred", pod: []string{"100m", "900Mi"}, others: []string{"500m", "256Mi"},
			want: Result{Reason: "Deferred", Message: "Node didn't have enough resource: memory, requested: 943718400, used: 268435456, capacity: 1073741824"}},
		{name: "more cpu than the node: Infeasible", pod: []string{"3", "256Mi"},
			want: Result{Reason: "Infeasible", Message: "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000"}},
		{name: "more memory than the node: Infeasible", pod: []string{"1", "2Gi"}, others: []string{"500m", "256Mi"},
			want: Result{Reason: "Infeasible", Message: "Node didn't have enough capacity: memory, requested: 2147483648, capacity: 1073741824"}},
		{name: "an init container resized: Infeasible", pod: []string{"100m", "64Mi"}, initChanged: []string{"proxy"},
			want: Result{Reason: "Infeasible", Message: "nodeagent resizes only app containers in place, not init containers (sidecars included) nor pod-level resources: proxy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := apiPod("p", list("cpu", tc.pod[0], "memory", tc.pod[1]))
			var others = pods(0, nil)
			if tc.others != nil {
				others = pods(1, list("cpu", tc.others[0], "memory", tc.others[1]))
			}
			// The pod itself, as allocated before, is among the admitted.
			others = append(others, apiPod("p", list("cpu", "100m")))
			if got := AdmitResize(pod, node, others, tc.initChanged); got != tc.want {
				t.Errorf("AdmitResize = %+v, want %+v", got, tc.want)
			}
		})
	}
}
