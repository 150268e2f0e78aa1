// Package apisync keeps the apiserver current with the agent's pods in
// connected mode: the mirror pods of the static pods (internal/mirrorsync)
// and the pods' statuses (internal/statusmanager), the one writer of each.
//
//	s, err := apisync.New(apisync.Options{NodeName: node, Pods: pods, Statuses: statuses, ...})
//	s.StaticPodChanged(pod)  // the agent's handler of static pods: added, changed, deletion asked
//	s.MirrorPodChanged(pod)  // ... of mirror pods
//	s.APIPodChanged(pod)     // ... of API pods
//	s.StaticPodRemoved(pod)  // a source no longer has it (MirrorPodRemoved, APIPodRemoved)
//	s.APIPodFinished(pod)    // the workers: nothing of an API pod runs, its volumes are gone
//	err = s.RunMirrors(ctx, conn)   // once connected, until ctx ends
//	err = s.RunStatuses(ctx, conn)  // beside it
//
// The agent decides a pod's kind once and calls the method of that kind;
// it tells what changed and never waits: each call only queues work for
// the mirror reconciler or the status manager. New subscribes to the
// status store (status.Store.OnChange): every new status is written. A nil *Sync
// (the standalone agent) takes every call and does nothing. Mirror tells
// the state of a static pod's mirror, for the local API and the
// nodeagent_static_pod_mirror metric alike (RegisterMirrorMetrics).
//
// Options.StatusWritten is told which generation of a pod's status (the
// status store's Entry.Generation) the apiserver holds, once written:
// the agent times a probe result's way there with it.
//
// An API pod whose containers and volumes are gone (APIPodFinished) may go
// from the apiserver once its deletion was asked: the status manager ends
// the deletion then.
package apisync
