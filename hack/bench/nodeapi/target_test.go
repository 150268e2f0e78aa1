package main

import "testing"

func TestTargetsSet(t *testing.T) {
	var ts targets
	if err := ts.Set("kubelet,/k/admin.kubeconfig,/k/fifo"); err != nil {
		t.Fatalf("a well-formed target: %v", err)
	}
	if got, want := ts[0], (target{label: "kubelet", kubeconfig: "/k/admin.kubeconfig", fifo: "/k/fifo"}); got != want {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	for _, bad := range []string{
		"kubelet,/k/admin.kubeconfig",             // no FIFO
		"nodeagent,/n/admin.kubeconfig,",          // an empty FIFO
		"nodeagent,/n/admin.kubeconfig,/a,/b",     // one field too many
		"kubelet,/other/admin.kubeconfig,/o/fifo", // the label again
	} {
		if err := ts.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted it", bad)
		}
	}
	if len(ts) != 1 {
		t.Errorf("refused targets were kept: %v", ts.String())
	}
}
