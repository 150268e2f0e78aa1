// Package pleg is the pod lifecycle event generator: it relists the
// runtime's pods at an interval, turns what changed since the previous
// relist into typed events, and keeps a cache of pod statuses that the pod
// workers read.
//
//	p, err := pleg.New(pleg.Options{Runtime: rt})   // rt: *runtime.Runtime
//	go p.Run(ctx)                                    // relists until ctx ends
//	for e := range p.Events() {                      // e.ID, e.Type, e.Data
//		// wake the pod's worker
//	}
//
//	// In a pod worker: the status as of after its own last action.
//	status, err := p.Cache().GetNewerThan(ctx, uid, lastSyncTime)
//
// Each relist lists pods and containers (two cheap list calls), compares
// their states with the previous relist, and fetches the full status only
// of the pods that changed. Every cached status is then known to be
// current as of the relist's start, which is what GetNewerThan waits for:
// a worker that acted at time t sees a status observed after t.
//
// With Options.ContainerPID, the PLEG also watches the process of every
// running container (package exitwatch) and relists the moment one exits:
// an exit is in the cache within milliseconds, not at the next relist.
// While the watch waits on every container the last relist saw running,
// the relists are Options.WatchedInterval (10 Intervals) apart instead of
// Interval: each Interval only checks that this still holds, which costs
// no call to the runtime. An idle node then lists its runtime 6 times a
// minute, not 60. A status a worker stores (after its own actions, which
// no watch sees) has the next Interval relist.
//
// With Options.Registry, it records the kubelet's PLEG metrics under the
// kubelet's names: kubelet_pleg_relist_duration_seconds, _interval_seconds,
// kubelet_pleg_last_seen_seconds, kubelet_running_pods and
// kubelet_running_containers{container_state}.
package pleg
