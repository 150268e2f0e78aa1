package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/checkpoint/keeper"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// housekeeper reconciles what runs with what is desired, periodically,
// from the sync loop's goroutine:
//
//   - it gives the workers the desired set (SyncKnownPods), so that they
//     terminate pods no longer desired and forget finished ones, and
//     starts afresh desired pods whose workers let them go;
//   - once the sources are ready, it kills runtime pods no source wants and
//     no worker handles (orphans, also from before a restart), and removes
//     the directories, logs, statuses, timelines, checkpoint records and
//     allocations (once the runtime could be listed) of
//     pods that are gone. Pods restored from the checkpoint are desired
//     (the pod manager holds them) until their source says otherwise, so
//     they are never taken for orphans while their source is down.
type housekeeper struct {
	pods         *podmanager.Manager
	workers      *podworkers.PodWorkers
	rt           Runtime
	vols         Volumes
	statuses     *status.Store
	timeline     *timeline.Log
	sourcesReady func() bool
	podsDir      string
	retention    time.Duration
	clock        clock.PassiveClock
	log          logr.Logger
	// ckpt is told of pods started afresh, and forgets checkpointed pods
	// nothing wants any more.
	ckpt *keeper.Keeper
	// alloc forgets the allocations of pods nothing wants or runs.
	alloc *allocation.Store
	// held reports pods the admission holds back: not desired, since they
	// must not start, but their statuses and timelines stay.
	held func(types.UID) bool
	// listed is the PLEG's last list of the runtime's pods (false before
	// one): housekeeping reads it rather than list the runtime again. Nil
	// lists the runtime.
	listed func() ([]*runtime.Pod, bool)

	// readySeen is set at the first run that finds the sources ready; the
	// runs after it may remove orphans. Updates a source sent just before
	// it became ready have then been taken in.
	readySeen bool
}

func (h *housekeeper) run(ctx context.Context) {
	desired := map[types.UID]*corev1.Pod{}
	for _, pod := range h.pods.Pods() {
		desired[pod.UID] = pod
	}
	uids := make([]types.UID, 0, len(desired))
	for uid := range desired {
		uids = append(uids, uid)
	}
	known := h.workers.SyncKnownPods(uids)
	for uid, pod := range desired {
		if _, ok := known[uid]; !ok && pod.DeletionTimestamp == nil {
			// Its worker let it go after a kill, while the source wants it
			// again (a manifest removed and put back): start it afresh.
			h.timeline.Record(uid, timeline.KindWorker, "restarting: the pod is desired again")
			h.ckpt.Running(uid)
			h.update(podworkers.UpdatePodOptions{Type: podworkers.Create, Pod: pod})
		}
	}

	if !h.sourcesReady() {
		return
	}
	if !h.readySeen {
		h.readySeen = true
		h.log.V(1).Info("All sources are ready; orphans will be removed from the next housekeeping on")
		return
	}
	wanted := func(uid types.UID) bool {
		_, d := desired[uid]
		_, k := known[uid]
		return d || k || h.held(uid)
	}
	h.ckpt.Prune(wanted)
	running := h.killOrphans(ctx, wanted)
	h.removeLeftovers(wanted, running)
	if running != nil {
		if err := h.alloc.Prune(func(uid types.UID) bool { return wanted(uid) || running[uid] }); err != nil {
			h.log.Error(err, "Housekeeping: forgetting the allocations of pods that are gone")
		}
	}
	h.timeline.Prune(h.clock.Now().Add(-h.retention), func(uid types.UID) bool {
		return wanted(uid) || running[uid]
	})
}

// killOrphans hands every runtime pod that nothing wants to a worker that
// kills it, and returns the UIDs the runtime holds.
func (h *housekeeper) killOrphans(ctx context.Context, wanted func(types.UID) bool) map[types.UID]bool {
	pods, err := h.runtimePods(ctx)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Error(err, "Housekeeping: listing runtime pods")
		}
		return nil
	}
	running := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		running[p.ID] = true
		if wanted(p.ID) {
			continue
		}
		h.log.Info("Killing orphaned pod", "pod", podtypes.FullName(p.Name, p.Namespace), "podUID", p.ID)
		h.timeline.Record(p.ID, timeline.KindWorker, "orphan: no source wants this runtime pod")
		h.update(podworkers.UpdatePodOptions{Type: podworkers.Kill, RuntimePod: &podworkers.RuntimePod{UID: p.ID, Name: p.Name, Namespace: p.Namespace}})
	}
	return running
}

// runtimePods is the PLEG's last list, or the runtime's own before there
// is one. A pod started since that list is desired, so never an orphan; a
// pod gone since is killed again, which finds nothing to stop.
func (h *housekeeper) runtimePods(ctx context.Context) ([]*runtime.Pod, error) {
	if h.listed != nil {
		if pods, ok := h.listed(); ok {
			return pods, nil
		}
	}
	return h.rt.GetPods(ctx)
}

// removeLeftovers removes what pods that are gone left behind: pod
// directories, and the statuses and logs of pods whose workers finished.
// running is nil when the runtime could not be listed: directories then
// stay, since a pod might still use them.
func (h *housekeeper) removeLeftovers(wanted func(types.UID) bool, running map[types.UID]bool) {
	for _, e := range h.statuses.List() {
		if wanted(e.Pod.UID) {
			continue
		}
		if err := removePodArtifacts(h.rt, h.statuses, e.Pod); err != nil {
			h.log.Error(err, "Housekeeping: removing a pod's leftovers", "podUID", e.Pod.UID)
		}
	}
	if running == nil {
		return
	}
	entries, err := os.ReadDir(h.podsDir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			h.log.Error(err, "Housekeeping: listing pod directories", "dir", h.podsDir)
		}
		return
	}
	for _, e := range entries {
		uid := types.UID(e.Name())
		if runtime.CheckUID(uid) != nil {
			continue // not a pod's directory; not the agent's to remove
		}
		if !e.IsDir() || wanted(uid) || running[uid] || h.workers.CouldHaveRunningContainers(uid) {
			continue
		}
		h.log.V(1).Info("Removing the directory of a pod that is gone", "dir", filepath.Join(h.podsDir, e.Name()))
		if err := h.vols.Cleanup(uid); err != nil {
			h.log.Error(err, "Housekeeping: removing a pod directory", "podUID", uid)
		}
	}
}

func (h *housekeeper) update(opts podworkers.UpdatePodOptions) {
	if err := h.workers.UpdatePod(opts); err != nil {
		h.log.V(2).Info("Pod update not taken", "err", err)
	}
}
