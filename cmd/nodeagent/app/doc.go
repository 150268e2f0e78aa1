// Package app is the nodeagent command: its flags and optional config
// file (command.go, options.go; internal/configfile reads the file, its
// own settings or a kubelet's KubeletConfiguration), the kubelet's flags
// it accepts or refuses by name (kubeletflags.go), and the wiring of
// every part into one process (wiring.go).
//
// Run builds the parts in the order they depend on each other, through
// one small builder each, then runs every long-running part, a Run(ctx),
// under one errgroup: the first to fail stops the others.
//
// Standalone mode (no --kubeconfig) takes pods from a manifest directory
// and an HTTP URL; it needs no apiserver:
//
//	runtime.go   cgroups -> runtime (CRI) -> volumes
//	containerlogs.go  runtime -> rotation of the containers' log files
//	sources.go   merger <- file source, HTTP source (built after the restore)
//	agent.go     pod index, status store -> PLEG <- runtime
//	               prober <- runtime;  checkpoint (bbolt) -> keeper
//	               [API sync <- pod index, status store (connected mode)]
//	               -> agent.NewSyncer <- runtime, volumes, PLEG cache, prober
//	               -> pod workers <- keeper.Syncer(syncer)
//	               -> agent (loop, housekeeping) <- merger, workers, PLEG,
//	                    prober, keeper
//	               -> container GC <- runtime, pod index, workers
//	             agent.Restore: the checkpointed pods, before any source runs
//	             runs: agent, pod workers, PLEG, prober, container GC; the
//	               keeper's writer last, one write after the others ended
//	imagegc.go   image garbage collection <- runtime
//	eviction.go  eviction manager <- cgroups, runtime, volumes, agent,
//	               container GC and image GC (reclaim), agent.Evict
//	provider.go  local API (unix socket) <- agent, sources
//	serving.go   /healthz /readyz /metrics (/debug/pprof) <- readiness,
//	               the agent's and the prober's metrics registries,
//	               client-go's metrics (clientmetrics.go)
//	startpages.go  gives back the start-up pages once ready
//
// Connected mode (--kubeconfig) adds the apiserver. What the pods from the
// apiserver reference exists from the start, as the runtime and the
// volumes are built with it; the parts that talk to the apiserver are
// built with the others and started in the same errgroup, but wait for the
// connection, which is resolved once the node's identity is loaded (a
// bootstrap may wait minutes for its CSR; the static pods run meanwhile):
//
//	connection.go  identity (bootstrap, then rotation) -> client, once
//	connected.go   pod objects, Services, RuntimeClasses: built first, for
//	                 the runtime and the volumes; read once connected, the
//	                 pod objects telling the agent which pods to sync
//	               Node and Lease <- agent health, sources, the eviction
//	                 manager's pressure; back after an outage -> API sync
//	               apiserver source -> merger
//	               API sync: mirror pods (RunMirrors; agent.Connected: API
//	                 pods admitted against the Node), pod statuses (RunStatuses)
//	nodeapi.go     node API (logs, exec, attach, port-forward; --port)
//	                 <- serving certificate from the cluster (node identity,
//	                 the Node's addresses; --rotate-server-certificates)
//	                 <- runtime, agent, volumes, both metrics registries
//	configz.go     the settings as a KubeletConfiguration, for /configz
//	events.go      events, queued from the start, sent once connected
//
// Stopping the process (SIGTERM, SIGINT) stops the agent, not the pods:
// containers keep running, and the next agent adopts them without a
// restart. On the way out the parts end, then the checkpoint's writer
// makes its last write, then the checkpoint is closed, the events broadcaster shut down and the runtime's connection
// closed.
package app
