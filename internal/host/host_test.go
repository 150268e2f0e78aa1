package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadMeminfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	write(t, path, "MemTotal:       24683656 kB\nMemFree: 100 kB\nHugePages_Total:       0\nbroken line\nBad: x kB\n")
	m, err := ReadMeminfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if m["MemTotal"] != 24683656*1024 || m["MemFree"] != 100*1024 || m["HugePages_Total"] != 0 {
		t.Errorf("ReadMeminfo = %v", m)
	}
	if _, ok := m["Bad"]; ok {
		t.Error("an unreadable value was taken")
	}
	if _, err := ReadMeminfo(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file read")
	}
}

func TestPIDs(t *testing.T) {
	proc := t.TempDir()
	write(t, filepath.Join(proc, "sys/kernel/pid_max"), "4194304\n")
	write(t, filepath.Join(proc, "loadavg"), "0.50 0.40 0.30 2/1234 5678\n")
	limit, free, err := PIDs(proc)
	if err != nil || limit != 4194304 || free != 4194304-1234 {
		t.Errorf("PIDs = %d, %d, %v; want 4194304, %d", limit, free, err, 4194304-1234)
	}
	write(t, filepath.Join(proc, "loadavg"), "0.50 0.40\n")
	if _, _, err := PIDs(proc); err == nil || !strings.Contains(err.Error(), "want 5 fields") {
		t.Errorf("a short loadavg: %v", err)
	}
}

func TestStatFS(t *testing.T) {
	st, err := StatFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if st.Capacity <= 0 || st.Available < 0 || st.Available > st.Capacity || st.InodesFree > st.Inodes {
		t.Errorf("StatFS = %+v", st)
	}
	if _, err := StatFS(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing path measured")
	}
}

func TestReadSmallIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	write(t, path, strings.Repeat("x", maxFile+100))
	b, err := ReadSmall(path)
	if err != nil || len(b) != maxFile {
		t.Errorf("read %d bytes, %v; want %d", len(b), err, maxFile)
	}
}

func TestReadNetDev(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev")
	write(t, path, `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 5000      50    0    0    0     0          0         0     5000      50    0    0    0     0       0          0
  eth0: 123456   789    3    0    0     0          0         0   654321     987    4    0    0     0       0          0
vethab12: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0
  cni0: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0
`)
	got, err := readNetDev(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Interface{
		{Name: "eth0", RxBytes: 123456, RxErrors: 3, TxBytes: 654321, TxErrors: 4},
		{Name: "cni0", RxBytes: 10, TxBytes: 20},
	}
	if !slices.Equal(got, want) {
		t.Errorf("interfaces %+v, want %+v", got, want)
	}
	write(t, path, "Inter-|\n face |\n  eth0: x 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n")
	if _, err := readNetDev(path); err == nil || !strings.Contains(err.Error(), "eth0") {
		t.Errorf("a counter that is not a number: %v, want an error naming the interface", err)
	}
}

func TestNamespaceInterfaces(t *testing.T) {
	own, err := NamespaceInterfaces(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	host, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	// This process is in the namespace /proc/net/dev shows.
	if len(own) != len(host) {
		t.Errorf("this process's namespace has %d interfaces, /proc/net/dev %d", len(own), len(host))
	}
}
