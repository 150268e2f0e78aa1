package eviction

import (
	"strings"
	"testing"
	"time"
)

func TestParseThresholds(t *testing.T) {
	ts, err := ParseThresholds(DefaultThresholds)
	if err != nil {
		t.Fatal(err)
	}
	if got := ts.String(); got != "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,pid.available<5%" {
		t.Errorf("String() = %s", got)
	}
	if b := ts.Bound(SignalMemoryAvailable, 1<<40); b != 100<<20 {
		t.Errorf("memory bound %d, want 100Mi", b)
	}
	if b := ts.Bound(SignalNodeFSAvailable, 1000); b != 100 {
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

func TestParseMinimumReclaimAndGracePeriods(t *testing.T) {
	mr, err := ParseMinimumReclaim("memory.available=50Mi,nodefs.available=5%")
	if err != nil {
		t.Fatal(err)
	}
	if got := mr[SignalMemoryAvailable].of(1 << 30); got != 50<<20 {
		t.Errorf("memory minimum reclaim %d, want 50Mi", got)
	}
	if got := mr[SignalNodeFSAvailable].of(1000); got != 50 {
		t.Errorf("nodefs minimum reclaim %d, want 5%% of 1000", got)
	}
	if _, err := ParseMinimumReclaim("memory.available<50Mi"); err == nil || !strings.Contains(err.Error(), "want signal=value") {
		t.Errorf("a threshold given as a minimum reclaim: %v", err)
	}
	gp, err := ParseGracePeriods("memory.available=1m30s, pid.available=0s")
	if err != nil {
		t.Fatal(err)
	}
	if gp[SignalMemoryAvailable] != 90*time.Second || gp[SignalPIDAvailable] != 0 {
		t.Errorf("grace periods %v", gp)
	}
	for in, want := range map[string]string{
		"memory.available":                  "want signal=duration",
		"cpu.available=1s":                  `unknown signal "cpu.available"`,
		"memory.available=soon":             "not a non-negative duration",
		"memory.available=-1s":              "not a non-negative duration",
		"pid.available=1s,pid.available=2s": "given twice",
	} {
		if _, err := ParseGracePeriods(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseGracePeriods(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestAllocatableMemoryIsBoundByTheMemoryThreshold(t *testing.T) {
	ts, _ := ParseThresholds("memory.available<100Mi")
	if !ts.Crossed(SignalAllocatableMemoryAvailable, Reading{Available: 99 << 20, Capacity: 1 << 30}) {
		t.Error("99Mi of the pods' 1Gi left is not below memory.available<100Mi")
	}
	if ts.Crossed(SignalAllocatableMemoryAvailable, Reading{Available: 101 << 20, Capacity: 1 << 30}) {
		t.Error("101Mi of the pods' 1Gi left is below memory.available<100Mi")
	}
}
