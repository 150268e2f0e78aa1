package main

import (
	"testing"
	"time"
)

func TestParseStatCPUCountsFromTheNamesEnd(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields:
	// utime 250 and stime 50 ticks are 3 s.
	stat := "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 1000 200 18446744073709551615"
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3*time.Second {
		t.Errorf("parseStatCPU = %v, want 3s", got)
	}
	if _, err := parseStatCPU("42 (x) S 1"); err == nil {
		t.Error("a short stat line parsed")
	}
}

func TestParseStatusRSS(t *testing.T) {
	got, err := parseStatusRSS("Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t    2048 kB\n")
	if err != nil || got != 2<<20 {
		t.Errorf("parseStatusRSS = %d, %v; want %d", got, err, 2<<20)
	}
	if _, err := parseStatusRSS("Name:\tkthreadd\n"); err == nil {
		t.Error("no VmRSS parsed")
	}
}

func TestFamiliesSumMatchesLabels(t *testing.T) {
	f, err := parseMetrics("test", []byte(`# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{resource="pods",verb="WATCH"} 3
apiserver_longrunning_requests{resource="nodes",verb="WATCH"} 2
apiserver_longrunning_requests{resource="pods",verb="CONNECT"} 7
# TYPE etcd_mvcc_put_total counter
etcd_mvcc_put_total 11
# TYPE apiserver_watch_events_sizes histogram
apiserver_watch_events_sizes_bucket{kind="Pod",le="1024"} 1
apiserver_watch_events_sizes_bucket{kind="Pod",le="+Inf"} 2
apiserver_watch_events_sizes_sum{kind="Pod"} 3000
apiserver_watch_events_sizes_count{kind="Pod"} 2
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.sum("apiserver_longrunning_requests", map[string]string{"verb": "WATCH"}); got != 5 {
		t.Errorf("WATCH sum = %v, want 5", got)
	}
	if got := f.sum("apiserver_longrunning_requests", nil); got != 12 {
		t.Errorf("sum of all = %v, want 12", got)
	}
	if got := f.sum("etcd_mvcc_put_total", nil); got != 11 {
		t.Errorf("counter = %v, want 11", got)
	}
	if got := f.sum("apiserver_watch_events_sizes", nil); got != 3000 {
		t.Errorf("histogram = %v, want its sum of samples, 3000", got)
	}
	if got := f.sum("absent", nil); got != 0 {
		t.Errorf("absent = %v, want 0", got)
	}
}
