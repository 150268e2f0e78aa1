// Package podworkers drives every pod on a node through its lifecycle, with
// one worker per pod UID:
//
//	           kill, deletion, terminal phase            containers stopped        cleaned up
//	SyncPod* ----------------------------------> SyncTerminatingPod+ --------> SyncTerminatedPod+ --> finished
//	                                              (SyncTerminatingRuntimePod+ for a pod with no spec, then forgotten)
//
// The agent implements Syncer, the four calls above, and feeds the workers
// with UpdatePod; the workers decide which call to make, when, and with
// which spec and grace period. Their rules are the kubelet's, made
// unbreakable:
//
//   - Updates to a busy worker are coalesced: the newest replaces the pending
//     one, and once a pod is being killed every later update is merged into
//     the kill. A kill cancels the context of a running SyncPod, so the
//     termination starts at once.
//   - Termination cannot be undone: a UID never runs again once killed. A
//     Create for it is refused (and remembered, so that housekeeping can
//     forget the finished worker and let the UID start afresh as a new one).
//   - A later kill can shorten the grace period in force, never lengthen it;
//     shortening restarts a running termination with the shorter period.
//     The grace period is honoured exactly: 0 stops the containers at once.
//   - Static pods that share a full name start one at a time, in arrival
//     order. When no container of one runs any more (its SyncTerminatingPod
//     has succeeded), the next starts at once; one killed while it
//     waits is skipped and never runs, unless its kill says it may be
//     running (KillPodOptions.MayBeRunning: a pod from before a restart),
//     in which case it holds the name until its termination has ended.
//   - The work queue tells the agent when to sync each pod again: at once
//     after a phase change, after a jittered resync interval when healthy,
//     after a jittered backoff on errors (shorter for ErrNetworkNotReady and
//     ErrTransient).
//   - SyncKnownPods terminates workers of pods no longer desired and forgets
//     finished ones; the queries (IsPodTerminationRequested,
//     CouldHaveRunningContainers, ShouldPodContentBeRemoved,
//     IsPodKnownTerminated) answer housekeeping's questions.
//
// # Structure
//
// As in etcd's raft, the lifecycle is a pure function (transition.go): it
// takes a pod's small status record and one event (an update, the worker
// asking for work, a Syncer call returning, housekeeping) and returns the
// new record and the effects to carry out. It starts no goroutine and reads
// no clock, so it is tested as tables. The shell (podworkers.go, worker.go)
// owns the records under one mutex, runs one goroutine per UID woken through
// a channel of capacity 1, makes the Syncer calls without the lock, and
// carries out the effects. A worker's goroutine ends as soon as its pod has
// finished; its record stays until SyncKnownPods forgets it. The start gate
// for static pods (gate.go) and the work queue (queue.go) are plain data
// structures under the same mutex.
//
// The stories in testdata/ replay events against the real shell with a
// Syncer that holds each call until the story releases it, and show every
// call and state change.
//
// # Use
//
//	workers, err := podworkers.New(podworkers.Options{Syncer: agentSyncer, Logger: log, Metrics: m})
//	go workers.Run(ctx)
//	workers.UpdatePod(podworkers.UpdatePodOptions{Type: podworkers.Create, Pod: pod})
//	...
//	for _, uid := range workers.DuePods() { // every second
//		workers.UpdatePod(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: podByUID(uid)})
//	}
//	known := workers.SyncKnownPods(desiredUIDs) // every housekeeping period
//
// The module knows the container runtime only through Syncer, and metrics
// only through the Metrics interface; it imports podtypes, the Kubernetes
// API types, a clock and a logger.
package podworkers
