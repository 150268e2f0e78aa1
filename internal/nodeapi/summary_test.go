package nodeapi

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
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
	w.authorizedAs("/stats/summary", "stats")
}

func TestSummaryFilesystems(t *testing.T) {
	w := newWorld(t, nil)
	// app's logs: the current file and a rotated one; side has none.
	appLogs := filepath.Join(w.rt.logDir, "default_web_uid-1", "app")
	if err := os.MkdirAll(appLogs, 0o750); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"0.log": 100, "0.log.20260101-000000.gz": 50} {
		if err := os.WriteFile(filepath.Join(appLogs, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, body := w.do("GET", "/stats/summary", "alice-token")
	var sum statsv1alpha1.Summary
	if err := json.Unmarshal([]byte(body), &sum); code != http.StatusOK || err != nil {
		t.Fatalf("/stats/summary: %d %q (%v)", code, body, err)
	}
	node := sum.Node.Fs
	if node == nil || node.CapacityBytes == nil || *node.CapacityBytes == 0 || *node.AvailableBytes > *node.CapacityBytes ||
		*node.UsedBytes != *node.CapacityBytes-*node.AvailableBytes || node.Inodes == nil || node.Time.IsZero() {
		t.Errorf("node fs %s", body)
	}
	if sum.Node.Runtime == nil || sum.Node.Runtime.ImageFs == nil || *sum.Node.Runtime.ImageFs.UsedBytes != fakeImageFsUsed ||
		sum.Node.Runtime.ImageFs.CapacityBytes == nil {
		t.Errorf("image fs %+v, want the runtime's %d used bytes and the filesystem's capacity", sum.Node.Runtime, fakeImageFsUsed)
	}
	if len(sum.Pods) != 1 || len(sum.Pods[0].Containers) != 2 {
		t.Fatalf("pods %s", body)
	}
	p := sum.Pods[0]
	used := func(fs *statsv1alpha1.FsStats) uint64 {
		if fs == nil || fs.UsedBytes == nil || fs.CapacityBytes == nil {
			t.Errorf("figures without use or capacity: %+v", fs)
			return 0
		}
		return *fs.UsedBytes
	}
	app, side := p.Containers[0], p.Containers[1]
	if used(app.Rootfs) != 3<<10 || used(app.Logs) != 150 || used(side.Rootfs) != 0 || used(side.Logs) != 0 {
		t.Errorf("containers' rootfs and logs: app %+v %+v, side %+v %+v", app.Rootfs, app.Logs, side.Rootfs, side.Logs)
	}
	if len(p.VolumeStats) != 1 || p.VolumeStats[0].Name != "scratch" || used(&p.VolumeStats[0].FsStats) != scratchBytes {
		t.Errorf("volumes %+v, want the emptyDir on disk only", p.VolumeStats)
	}
	if got, want := used(p.EphemeralStorage), uint64(3<<10+150+scratchBytes); got != want {
		t.Errorf("pod ephemeral storage %d, want layers, logs and emptyDirs: %d", got, want)
	}
	if n := sum.Node.Network; n == nil || n.Name != "eth0" || *n.RxBytes != 10 || *n.TxBytes != 20 || len(n.Interfaces) != 2 {
		t.Errorf("node network %+v, want eth0 by default, and both interfaces", n)
	}
	if n := p.Network; n == nil || n.Name != "eth0" || *n.RxBytes != 1000 || *n.TxBytes != 2000 || len(n.Interfaces) != 1 {
		t.Errorf("pod network %+v, want its namespace's eth0", n)
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
