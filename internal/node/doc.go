// Package node makes the agent a Node of its cluster: it registers the
// Node object (or adopts an existing one of its name), keeps its status
// current and renews its Lease in kube-node-lease, all with the node's
// own identity, which the Node authorizer and NodeRestriction bound.
//
// What the status says is measured, never assumed: capacity from the
// machine (Machine), pressure from the eviction thresholds met
// (Options.Pressure: the eviction manager's), readiness from the runtime
// and the agent's own health. The status is patched against the last Node the apiserver
// returned or sent, only when it changed (at most every
// StatusUpdateFrequency) and at least every StatusReportFrequency; the
// Node is watched, not polled, so that what others write to it (the node
// lifecycle controller marking it Unknown, a user deleting it) is seen at
// once.
//
// After an outage the apiserver's return is known at once, not after the
// longest back-off among the parts that wait on it: once a request of the
// Node fails, /readyz is asked every 250 ms, and the first answer to any
// of its requests writes a heartbeat, starts a failing Lease renewal over
// and calls Options.OnAPIServerBack (reach.go).
//
// Use it as:
//
//	n, err := node.New(node.Options{Name: "worker-1", ...})
//	go n.Run(ctx, clientset) // until ctx ends
package node
