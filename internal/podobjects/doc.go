// Package podobjects gives the pods bound to this node through the
// apiserver the objects they reference: their ConfigMaps and Secrets,
// through staging/objectcache with the change detection strategy the
// operator picks (Watch, Cache or Get, as the kubelet's
// configMapAndSecretChangeDetectionStrategy), and their service account
// tokens, through internal/tokens.
//
// An Objects exists from the agent's start, before the node's identity is
// loaded, so that the runtime and the volumes can be built with it; it
// reads nothing until Run is given the node's client. Until then every
// read fails with ErrNotConnected, and the pod that asked waits and tries
// again. Static pods never read through it.
//
// The agent registers each API pod (RegisterPod) when it is added or
// changed and unregisters it when it is gone; with the Watch strategy each
// referenced mutable object is then watched, and a change is told to the
// Listener Run is given, so that the pods using it are synced at once:
// Changes (changes.go) is that Listener, a queue the agent's sync loop
// takes the changes from (Change.Affects names the pods to sync).
package podobjects
