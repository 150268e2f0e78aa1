package podtypes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Op says what a PodUpdate does to the pods it carries.
type Op int

const (
	// SET carries the complete current set of pods of its source.
	SET Op = iota
	// ADD carries pods that are new to the agent.
	ADD
	// UPDATE carries pods whose spec or metadata changed.
	UPDATE
	// DELETE carries pods whose graceful deletion was requested (a deletion
	// timestamp was set); they are still to be terminated.
	DELETE
	// REMOVE carries pods that are gone from their source.
	REMOVE
	// RECONCILE carries pods whose status alone changed.
	RECONCILE
)

var opNames = [...]string{SET: "SET", ADD: "ADD", UPDATE: "UPDATE", DELETE: "DELETE", REMOVE: "REMOVE", RECONCILE: "RECONCILE"}

func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// PodUpdate is one change to the agent's desired pods, as a source or the
// merger emits it. Pods are owned by the receiver once sent.
type PodUpdate struct {
	Op     Op
	Source Source
	Pods   []*corev1.Pod
}
