package main

import (
	"fmt"
	"slices"
	"strings"
)

// target is one node's cluster: the kubeconfig that reaches its apiserver
// and the host end of its pod's FIFO.
type target struct {
	label, kubeconfig, fifo string
}

// targets is the repeatable --target flag.
type targets []target

func (ts *targets) String() string {
	var s []string
	for _, t := range *ts {
		s = append(s, t.label+","+t.kubeconfig+","+t.fifo)
	}
	return strings.Join(s, " ")
}

func (ts *targets) Set(v string) error {
	parts := strings.Split(v, ",")
	if len(parts) != 3 || slices.Contains(parts, "") {
		return fmt.Errorf("%q: want LABEL,KUBECONFIG,FIFO, none of them empty", v)
	}
	for _, t := range *ts {
		if t.label == parts[0] {
			return fmt.Errorf("%q: the label %s is given twice", v, t.label)
		}
	}
	*ts = append(*ts, target{label: parts[0], kubeconfig: parts[1], fifo: parts[2]})
	return nil
}
