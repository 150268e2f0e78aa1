package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestBinaryKubeletMetricsAndJSONLogs runs the agent with
// --logging-format=json and a static pod with an init container: /metrics
// has the kubelet's metrics that its dashboards and alerts read, under
// its names, with the values this run gives them, and every line the
// agent logged is a JSON object.
func TestBinaryKubeletMetricsAndJSONLogs(t *testing.T) {
	h := newAgent(t, "--logging-format=json")
	pod := testPod("kmetrics", shContainer("app", sleepForever))
	pod.Spec.InitContainers = []corev1.Container{shContainer("init", "true")}
	h.writeManifest(pod)
	h.waitPod("kmetrics", "running", 60*time.Second, runningContainer("app"))
	time.Sleep(2 * time.Second) // two relists more

	atLeast := func(min float64, name string, labels ...string) {
		t.Helper()
		if v := h.metricWith(t, name, labels...); v < min {
			t.Errorf("%s%v = %v, want at least %v", name, labels, v, min)
		}
	}
	atLeast(1, "kubelet_running_pods")
	atLeast(1, "kubelet_running_containers", `container_state="running"`)
	atLeast(1, "kubelet_running_containers", `container_state="exited"`) // the init container
	atLeast(2, "kubelet_pleg_relist_duration_seconds_count")
	atLeast(1, "kubelet_pleg_relist_interval_seconds_count")
	atLeast(1, "kubelet_pod_start_duration_seconds_count")
	atLeast(1, "kubelet_pod_worker_duration_seconds_count", `operation_type="create"`)
	atLeast(1, "kubelet_runtime_operations_total", `operation_type="run_podsandbox"`)
	atLeast(2, "kubelet_runtime_operations_total", `operation_type="start_container"`)
	atLeast(2, "kubelet_runtime_operations_duration_seconds_count", `operation_type="list_podsandbox"`)
	atLeast(1, "kubelet_started_pods_total")
	atLeast(1, "kubelet_started_containers_total", `container_type="init_container"`)
	atLeast(1, "kubelet_started_containers_total", `container_type="container"`)
	atLeast(1, "kubelet_cgroup_manager_duration_seconds_count", `operation_type="create"`)
	atLeast(1, "process_resident_memory_bytes")
	atLeast(1, "go_goroutines")
	if v := h.metricWith(t, "kubelet_node_name", `node="`+h.node+`"`); v != 1 {
		t.Errorf("kubelet_node_name{node=%q} = %v, want 1", h.node, v)
	}
	if errs := h.metricWith(t, "kubelet_runtime_operations_errors_total", `operation_type="run_podsandbox"`); errs != 0 {
		t.Errorf("kubelet_runtime_operations_errors_total{operation_type=run_podsandbox} = %v, want none", errs)
	}
	// The last relist began within the last few seconds.
	if seen := time.Unix(int64(h.metricWith(t, "kubelet_pleg_last_seen_seconds")), 0); time.Since(seen) > 10*time.Second || time.Until(seen) > time.Second {
		t.Errorf("kubelet_pleg_last_seen_seconds = %v, want within seconds of now", seen)
	}

	h.stop()
	f, err := os.Open(filepath.Join(h.dir, "agent-1.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, started := 0, false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var entry struct {
			Msg string `json:"msg"`
		}
		if err := json.Unmarshal(sc.Bytes(), &entry); err != nil {
			t.Errorf("a log line that is not JSON (%v): %s", err, sc.Text())
			continue
		}
		lines++
		started = started || entry.Msg == "nodeagent started"
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 5 || !started {
		t.Errorf("%d JSON log lines, the start's among them: %v; want it and more", lines, started)
	}
}
