package keeper

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// Sink takes the pods restored from the checkpoint as if their sources had
// sent them; *config.Merger satisfies it.
type Sink interface {
	Merge(ctx context.Context, u podtypes.PodUpdate) error
}

// RestoreResult says what Restore did.
type RestoreResult struct {
	// Restored pods were given to the sink, as desired again.
	Restored int
	// Resumed terminations were under way before the restart.
	Resumed int
	// Completed pods are among the restored: they ran to their end and are
	// reported with their final status, never run again.
	Completed int
	// Forgotten records belonged to sources no longer configured, or to
	// pods whose termination had ended.
	Forgotten int
	// Holders maps the full name of each restored pod of the file source
	// to its manifest's path: the file that held the name before the
	// restart (config.FileOptions.Holders).
	Holders map[string]string
}

// Targets are what Restore gives the restored pods to.
type Targets struct {
	// Sink takes the restored pods as their sources' ADDs.
	Sink Sink
	// Statuses takes the final status of each pod that completed.
	Statuses interface {
		Set(pod *corev1.Pod, st corev1.PodStatus) uint64
	}
	// Workers kill the pods whose termination was under way.
	Workers interface {
		UpdatePod(podworkers.UpdatePodOptions) error
	}
	Timeline *timeline.Log
}

// Restore brings back the static pods of the checkpoint. Call it before
// the sources start: each checkpointed pod of a configured
// source is merged into to.Sink as an ADD from that source, so that it is
// desired until the source answers. The source's first full set then wins,
// as the merger compares it with what it holds: pods it no longer lists are
// removed (terminated, then forgotten), changed ones replaced. Pods still
// running in the runtime are adopted by their first sync, not restarted.
//
// A pod whose termination was under way is killed again with the time left
// until its deadline; a pod whose termination had ended, or whose source is
// not configured any more, is forgotten (what it left in the runtime is an
// orphan like any other). A pod that completed is restored with its final
// status, desired but never run again.
//
// Without a checkpoint, Restore does nothing. Records that cannot be read
// are logged and skipped.
func (c *Keeper) Restore(ctx context.Context, sources []podtypes.Source, to Targets) (RestoreResult, error) {
	var res RestoreResult
	if c.off() {
		return res, nil
	}
	recs, err := c.load()
	if err != nil {
		// List returns the records it could read alongside the others' errors.
		c.log.Error(err, "Checkpoint: some records could not be read; they are skipped")
	}
	configured := map[podtypes.Source]bool{}
	for _, s := range sources {
		configured[s] = true
	}
	now := c.clock.Now()
	var keep []checkpoint.PodRecord
	for _, rec := range recs {
		switch {
		case !configured[rec.Source] || rec.Source == podtypes.APIServerSource:
			c.log.Info("Checkpoint: forgetting a pod whose source is not configured", "pod", podtypes.PodFullName(rec.Pod), "podUID", rec.UID, "source", rec.Source)
			c.forget(rec.UID)
			res.Forgotten++
		case rec.Phase == checkpoint.Terminated && rec.Final == nil:
			c.forget(rec.UID)
			res.Forgotten++
		case rec.Phase == checkpoint.Terminating:
			c.resume(to, rec, rec.Deadline)
			res.Resumed++
		default:
			keep = append(keep, rec)
		}
	}

	// Two records of one full name (a crash in the middle of a manifest
	// change): the newest runs, the older is stopped with its full grace
	// period.
	slices.SortFunc(keep, func(x, y checkpoint.PodRecord) int { return y.Updated.Compare(x.Updated) })
	bySource := map[podtypes.Source][]*corev1.Pod{}
	names := map[string]bool{}
	for _, rec := range keep {
		name := podtypes.PodFullName(rec.Pod)
		if names[name] {
			c.resume(to, rec, now.Add(time.Duration(podtypes.GracePeriod(rec.Pod))*time.Second))
			res.Resumed++
			continue
		}
		names[name] = true
		if rec.Source == podtypes.FileSource && rec.Origin != "" {
			if res.Holders == nil {
				res.Holders = map[string]string{}
			}
			res.Holders[name] = rec.Origin
		}
		c.markRestored(rec.UID)
		if rec.Final != nil {
			// It completed: its final status is reported, and the workers
			// are given it with that status, so it never runs again.
			to.Statuses.Set(rec.Pod, *rec.Final)
			to.Timeline.Record(rec.UID, timeline.KindSeen, "restored from the checkpoint: completed (%s); it will not run again", rec.Final.Phase)
			res.Completed++
		} else {
			to.Timeline.Record(rec.UID, timeline.KindSeen, "restored from the checkpoint (source %s, accepted %s)", rec.Source, rec.Updated.Format(time.RFC3339))
		}
		bySource[rec.Source] = append(bySource[rec.Source], rec.Pod)
		res.Restored++
	}
	for _, src := range podtypes.Sources() {
		pods := bySource[src]
		if len(pods) == 0 {
			continue
		}
		slices.SortFunc(pods, func(x, y *corev1.Pod) int { return cmp.Compare(podtypes.PodFullName(x), podtypes.PodFullName(y)) })
		if err := to.Sink.Merge(ctx, podtypes.PodUpdate{Op: podtypes.ADD, Source: src, Pods: pods}); err != nil {
			return res, fmt.Errorf("restoring the checkpointed pods of source %s: %w", src, err)
		}
	}
	c.metrics.restored.Set(float64(res.Restored))
	c.log.Info("Checkpoint restored", "restored", res.Restored, "completed", res.Completed, "resumedTerminations", res.Resumed, "forgotten", res.Forgotten)
	return res, nil
}

// resume kills a pod whose termination was under way before the restart,
// with its spec and the grace period left until deadline (rounded up to
// whole seconds; 0 once it has passed). Its containers may still run, so
// the workers terminate it in full even though it never synced in this
// process, and a static pod holds its full name until then: a newer pod
// of the same name, restored or read from the source, waits for it.
func (c *Keeper) resume(to Targets, rec checkpoint.PodRecord, deadline time.Time) {
	to.Timeline.Record(rec.UID, timeline.KindWorker, "resuming a termination from before the restart (deadline %s)", deadline.Format(time.RFC3339))
	left := max(0, int64(math.Ceil(deadline.Sub(c.clock.Now()).Seconds())))
	c.log.Info("Checkpoint: resuming a termination", "pod", podtypes.PodFullName(rec.Pod), "podUID", rec.UID,
		"deadline", deadline, "gracePeriodLeft", left)
	err := to.Workers.UpdatePod(podworkers.UpdatePodOptions{
		Type: podworkers.Kill,
		Pod:  rec.Pod,
		Kill: &podworkers.KillPodOptions{GracePeriodOverride: &left, MayBeRunning: true},
	})
	if err != nil {
		c.log.Error(err, "Checkpoint: resuming a termination", "podUID", rec.UID)
	}
}
