// Package agent is the pod-handling core of nodeagent: it takes the merged
// stream of desired pods from the config sources and runs them on the
// container runtime through one pod worker per pod.
//
// It builds nothing long-running: the wiring (cmd/nodeagent/app) builds
// the pod index, the status store, the PLEG, the prober, the checkpoint
// keeper and API sync, then the agent's syncer, the pod workers that call
// it, and the agent over both; it runs each part's Run(ctx) beside the
// agent's:
//
//	s, err := agent.NewSyncer(agent.SyncerOptions{Runtime: rt, Volumes: vols,
//		Pods: pods, Statuses: statuses, PLEG: pl, Prober: pr, API: api, ...})
//	workers, err := podworkers.New(podworkers.Options{
//		Syncer: ckpt.Syncer(s, statuses.Status, desired), Metrics: s.WorkerMetrics()})
//	a, err := agent.New(agent.Options{Syncer: s, Workers: workers, PLEG: pl, Prober: pr,
//		Checkpoint: ckpt, Updates: merger.Updates(), SourcesReady: ready, RootDir: dir})
//	err = a.Run(ctx)           // the loop, until ctx ends; kills nothing on the way out
//	pods := a.Pods()           // for the local API
//
// # Parts
//
// The agent holds the sync loop, the syncer and housekeeping, and the
// small glue to the parts that are packages of their own:
//
//   - syncer (syncer*.go) implements podworkers.Syncer: volumes, then
//     runtime.SyncPod with the status the PLEG observed after the pod's
//     previous sync, then the API status (internal/status) into the status
//     store; KillPod with the grace period in force; cleanup.
//   - syncLoop (loop.go, updates*.go) is the one select loop: config
//     updates go to the pod manager and the pod workers through one
//     handler per kind of pod (static, mirror, API), which tells the parts
//     that follow pods of its kind (podNotices); PLEG events and due pods
//     become syncs, and housekeeping runs on its tick.
//   - housekeeper (housekeeping.go) tells the workers which pods are
//     desired, restarts pods the workers let go, kills runtime pods no
//     source wants once every source is ready, and removes what removed
//     pods left behind (pod directories, log directories, statuses,
//     timelines).
//   - the checkpoint keeper (internal/checkpoint/keeper) keeps the
//     checkpoint (Options.Checkpoint) in step: the loop tells it of
//     accepted and removed static pods, housekeeping of pods started afresh
//     or gone, and it wraps the syncer to record terminations and final
//     statuses; Restore brings the pods back at start. Its writer runs
//     beside the other parts and outlives them by one last write (the
//     wiring's part list ends it last).
//   - admission (the rules, the host ports held and the API pods waiting
//     for the Node in internal/admission; the calls in updates_static.go
//     and updates_api.go): a pod asking for a host port that an admitted
//     pod holds is held back (admission.HostPorts): it is not indexed and
//     gets no worker, its status (Pending, HostPortConflict) names the port
//     and the holder, and the housekeeping tick admits it once the holder
//     has stopped. An API pod is admitted once (admission.AdmitAPIPod),
//     after the Node is known; one refused ends Failed. Its resizes
//     (resize.go) are admitted as the node can give them, Deferred or
//     Infeasible until then (admission.AdmitResize), and recorded in the
//     allocation store (internal/allocation), whose allocation the syncer
//     gives the pod to run with.
//   - API sync (internal/apisync), in connected mode, keeps the mirror
//     pods and the pod statuses in the apiserver: each kind's handler tells
//     it of its pods changed and removed by the method of that kind, the
//     syncer of API pods finished; it subscribes to the status store for
//     new statuses. Connected tells the agent the Node may be got from
//     now on, for the admission of API pods.
//     The loop syncs the API pods whose ConfigMaps or Secrets changed
//     (podobjects.Changes, Options.ObjectChanges).
//   - probes (probes.go) wire internal/prober: each sync hands the pod's
//     runtime status to the prober (workers start and end with their
//     containers) and generates the status with its results; a probe
//     result that changes reaches the loop on its own channel, which
//     updates the pod's readiness in the status store at once and syncs
//     the pod; the sync first kills containers whose liveness or startup
//     probe failed, with the probe's grace period.
//   - hooks (prober.Hooks, built in NewSyncer) run postStart after a sync
//     started a container and before the status shows it (a failure kills
//     it), and preStop before a stop, within the grace period, whose rest
//     the stop gets; probes.go hands them to the runtime's sync.
//   - adoptionRuntime (adoption.go) counts the pods whose running
//     containers a first sync kept.
//   - metrics (metrics.go) implements podworkers.Metrics and the agent's
//     own metrics on a component-base registry; kubelet_metrics.go adds
//     the kubelet's under its names: kubelet_pod_worker_duration_seconds
//     (SyncPod by update type, timed by the syncer; kill, terminated),
//     kubelet_pod_start_duration_seconds (config.seen to the first
//     Running status) and kubelet_node_name.
//
// # Restarts adopt, never kill
//
// Run returns once the loop has ended and never kills a pod on its way
// out, nor do the parts beside it: a new agent process finds the containers by their labels, gets
// the same static pods (the config gives them UIDs derived from their
// manifests) and, since an unchanged spec plans no runtime call, adopts
// them as they run. Orphans (runtime pods no source wants) are killed only
// once every source has delivered its pods and a full housekeeping period
// has passed since, so that a pod still on its way from a source is never
// taken for one.
//
// # The checkpoint: memory, not authority
//
// With a checkpoint, the wiring calls Restore after New and before the
// sources run (internal/checkpoint/keeper does the work): the static pods
// the checkpoint holds are merged into the config stream as if their
// sources had sent them, so they are desired (and adopted, or started
// again if the runtime lost them) even while their source is down or not
// yet read. The source's first full set then wins: the
// merger compares it with what it holds, so a pod the source no longer
// lists is terminated and forgotten. A termination under way at the crash
// resumes with the time left until its recorded deadline. A pod that
// completed (Succeeded or Failed while its source still listed it) is
// restored with its final status and never runs again under its UID;
// removing its manifest forgets it, so that putting it back runs it afresh.
package agent
