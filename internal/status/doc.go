// Package status computes the API status of a pod from what the runtime
// reports, as the kubelet computes it, and keeps the newest status of every
// pod the agent runs.
//
//	st := status.Generate(status.Input{
//		Pod:      pod,
//		Runtime:  runtimeStatus,         // from the PLEG cache
//		Result:   &syncResult,           // the last runtime.SyncPod, for waiting reasons
//		Previous: prev,                  // keeps start and transition times
//		HostIPs:  nodeIPs,               // the Node's addresses, primary first
//		Now:      clock.Now(),
//	})
//	store.Set(pod, st)
//
// Generate is a pure function: phase (Pending, Running, Succeeded, Failed,
// honouring init containers and the restart policy), init and app container
// statuses (waiting with the kubelet's reasons, running, terminated, the
// last termination, restart count, image and container IDs, readiness),
// the conditions PodScheduled, PodReadyToStartContainers, Initialized,
// ContainersReady and Ready, host IPs and pod IPs (a host-network pod
// takes the node's), start time and QoS class. A pod that
// reached Succeeded or Failed never leaves that phase. For in-place
// resizes (resize.go): each container's resources (what it runs with) and
// allocatedResources, the PodResizePending and PodResizeInProgress
// conditions, and observedGeneration on the status and the agent's
// conditions.
//
// The Store numbers each change of a pod's status (Entry.Generation,
// growing store-wide), so that a writer can say which change the status
// it wrote holds.
//
// Readiness and Started follow the probes (Input.Probes, WithProbes): a
// container without a readiness probe is ready while it runs.
package status
