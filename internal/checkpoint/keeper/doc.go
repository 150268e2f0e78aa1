// Package keeper keeps the agent's checkpoint (internal/checkpoint) in step
// with its static pods, and brings them back at start.
//
//	k, err := keeper.New(keeper.Options{Store: store, Registry: reg, Logger: log})
//	res, err := k.Restore(ctx, sources, keeper.Targets{Sink: merger, ...}) // before the sources run
//	syncer = k.Syncer(syncer, statuses.Status, desired)                   // for the pod workers
//	err = k.Run(ctx) // the writer, until ctx ends, with one last write
//
// What it records: a static pod as its source gave it (Accepted), its
// termination as it starts (with a deadline) and ends, the final status of
// a pod that completed while its source still listed it (FinalStatus), and
// nothing of a pod once it is gone (Prune, ForgetCompleted). Pods from the
// apiserver and mirror pods are never recorded.
//
// Callers change only the keeper's memory, under its lock; the one writer
// goroutine (Run) writes every change since its last write in one
// transaction (one fsync for a burst) and retries a failed write with a
// back-off. The Syncer it wraps around the agent's waits for the writer
// only where order matters: a pod runs once recorded, and a completed
// pod's containers go once its final status is written. A write that fails
// never stops a pod; Problem reports it.
//
// Restore reads the checkpoint at start: each static pod of a configured
// source is given to the sink as an ADD from its source, so it is desired
// (and adopted, or started again) until the source answers; a termination
// under way is resumed with the time left until its deadline; a pod that
// completed comes back with its final status and never runs again.
package keeper
