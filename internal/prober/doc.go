// Package prober runs the liveness, readiness and startup probes of the
// agent's containers, as the kubelet does: one worker goroutine per probe
// of each running container instance, started when the agent sees the
// instance running (Manager.Sync) and ended when it stops running, its pod
// stops, or the Manager's Run ends.
//
// A worker probes (exec through the runtime's ExecSync, httpGet, tcpSocket
// or grpc's standard health protocol) after the probe's initial delay and
// then every period, each probe bounded by its timeout, and turns the
// outcomes into a result once successThreshold or failureThreshold of them
// agree. A startup probe holds back the container's liveness and readiness
// probes until it has succeeded, and then stops probing.
//
// Results are kept by container instance (status.Probes reads them), and
// each change is sent on Updates, so that the agent's sync loop shows a new
// readiness at once and syncs the pod. A liveness or startup failure puts
// its worker on hold and lists the instance in Unhealthy: the agent kills
// it, with the probe's grace period, and its restart policy and back-off
// decide what follows.
//
// Each update says when its probe was due and when its outcome came.
// Steps follows a change on from there: the agent tells it when the pod's
// status took the change in (Shown, which the local API serves from then)
// and, in connected mode, when the apiserver held it (Written, from the
// status manager). Each step is recorded in the pod's timeline and timed
// in nodeagent_prober_result_step_duration_seconds{probe_type,step}:
// ran (due to outcome: the timer's lateness and the probe itself), status
// and apiserver (from the outcome).
//
// Lifecycle hooks live here too, policy and execution together. RunHook
// runs a hook's action (exec, httpGet, sleep) with the same handlers,
// bounded by a timeout; Hooks says when and with what time: postStart
// right after a container's start and before its status shows it running
// (a failure kills the container), preStop before every stop of a running
// container (a pod's, a sidecar's, a replaced or unhealthy container's),
// within the grace period, whose rest the stop gets (PreStopContainer is
// the one place a single container's preStop is built).
package prober
