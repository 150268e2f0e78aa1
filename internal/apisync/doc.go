// Package apisync keeps the apiserver current with the agent's pods in
// connected mode: the mirror pods of the static pods (internal/mirrorsync)
// and the pods' statuses (internal/statusmanager), the one writer of each.
//
//	s, err := apisync.New(apisync.Options{NodeName: node, Pods: pods, Statuses: statuses, ...})
//	s.PodChanged(pod)        // the agent's sync loop: a pod added, changed, or its deletion asked
//	s.PodRemoved(pod)        // a source no longer has it
//	s.PodFinished(pod)       // the workers: nothing of an API pod runs, its volumes are gone
//	s.StatusChanged(uid)     // the status store: a new status to write
//	err = s.Run(ctx, conn)   // once the Node exists, until ctx ends
//
// The agent tells it what changed and never waits for it: each call only
// queues work for the mirror reconciler or the status manager. A nil *Sync
// (the standalone agent) takes every call and does nothing. Mirror tells
// the state of a static pod's mirror, for the local API and the
// nodeagent_static_pod_mirror metric alike (RegisterMirrorMetrics).
//
// Options.StatusWritten is told which generation of a pod's status (the
// status store's Entry.Generation) the apiserver holds, once written:
// the agent times a probe result's way there with it.
//
// An API pod whose containers and volumes are gone (PodFinished) may go
// from the apiserver once its deletion was asked: the status manager ends
// the deletion then.
package apisync
