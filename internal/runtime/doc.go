// Package runtime runs pods on a CRI runtime (containerd). It is the only
// package of nodeagent that speaks CRI: everything else sees pods through
// the CRI-free types in types.go.
//
//	rt, err := runtime.New(ctx, runtime.Options{Endpoint: "unix:///run/containerd/containerd.sock"})
//	defer rt.Close()
//
//	status, err := rt.GetPodStatus(ctx, pod.UID)       // or from the PLEG cache
//	res, err := rt.SyncPod(ctx, pod, mounts, status, hooks)   // mounts from the volumes package
//	if errors.Is(err, runtime.ErrCrashLoopBackOff) {   // sync again after res.RetryAfter
//	}
//	if res.Terminal {                                  // the pod has finished
//	}
//	err = rt.KillPod(ctx, pod, runtime.Pod{ID: pod.UID}, nil)
//	pods, err := rt.GetPods(ctx)                       // everything the runtime holds
//	err = rt.GarbageCollect(ctx, func(uid types.UID) bool { return !known(uid) })
//
// SyncPod works in two halves. computePlan (plan*.go) is a pure function of
// the pod spec and the observed status that decides what to do: (re)create
// the sandbox when it is missing, not ready, several, or of the wrong
// network mode; replace containers whose spec hash changed; run init
// containers one at a time to completion, resize running app containers
// whose cpu or memory changed (resize.go: in place through
// UpdateContainerResources inside the pod cgroup, or by a restart where
// the resizePolicy says RestartContainer; the hash that decides a
// replacement leaves cpu and memory out), sidecars (restartPolicy Always)
// kept running and holding the next one back until their startup probe
// passed (SyncHooks.Started, the caller's prober); restart exited
// containers as the restart policy says. The executor (sync.go) then
// applies the crash-loop back-off (backoff.go) and makes the CRI calls,
// running each started container's postStart hook (SyncHooks.PostStart)
// before the next start. A pod stops app containers first, then its
// sidecars in reverse order, each after its preStop hook, within one grace
// period (kill.go).
//
// Every securityContext field reaches the CRI or is refused
// (security.go): what the node cannot honour (AppArmor or SELinux off, a
// missing Localhost seccomp profile, user namespaces, Windows options,
// supplementalGroupsPolicy Strict) is refused before anything of the pod
// is created, and runAsNonRoot is checked against the image's user before
// each container is created; both with a *SecurityError naming the field,
// which the status reports as CreateContainerConfigError. Unset, seccomp
// is Unconfined and no_new_privs off, the kubelet's defaults.
//
// A container's environment (env.go) is the kubelet's: envFrom, env with
// its $(VAR) references expanded (internal/expand), then the service
// variables of Options.Services; its command and args are expanded
// against that environment. Each instance gets a fresh termination
// message file under Options.PodsDir, and GetPodStatus reports what an
// exited one wrote there, or the end of its log under
// FallbackToLogsOnError (termination.go).
//
// A new sandbox gets the kubelet's resolver configuration (dns.go), which
// containerd writes to its resolv.conf: by dnsPolicy, the cluster's DNS
// servers and search domains (Options.ClusterDNS, ClusterDomain), the
// node's resolv.conf (Options.ResolvConf), or the pod's dnsConfig alone,
// with the pod's dnsConfig merged in and the whole cut to the resolver's
// bounds; SyncResult.Warnings says what was cut or fell back
// (DNSConfigForming, MissingClusterDNS). Each pod gets the kubelet's
// managed hosts file (hosts.go), <PodsDir>/<uid>/etc-hosts, written once
// its sandbox has its addresses and mounted at /etc/hosts in every
// container that mounts nothing there itself: localhost, the pod's
// addresses under its hostname and FQDN, and its hostAliases; on the host
// network, the node's /etc/hosts and the hostAliases.
//
// Sandboxes and containers carry the kubelet's labels and annotations
// (io.kubernetes.pod.uid, io.kubernetes.container.hash, ...), so crictl
// shows familiar names and a new agent process adopts what runs: GetPods
// and GetPodStatus find pods by their labels alone, and SyncPod with an
// unchanged spec leaves their containers alone.
//
// A pod's sandbox runs with the handler of its RuntimeClass, resolved by
// Options.RuntimeClasses (internal/runtimeclass, connected mode). A class
// that does not resolve, or whose handler the runtime lacks, fails the
// sandbox's creation (ErrCreateSandbox, the kubelet's
// FailedCreatePodSandBox) and the pod waits, Pending, for the next sync;
// the default handler is never taken instead. Standalone, a pod naming a
// class is refused the same way (ErrUnsupported): nothing can resolve it.
// The pod's spec.overhead goes with the sandbox's config, as the kubelet
// sends it, for runtimes that size VMs by it.
//
// With Options.Registry, every unary CRI call is counted, timed and its
// errors counted under the kubelet's names and operation_type values
// (kubelet_runtime_operations_total, _errors_total, _duration_seconds),
// through a gRPC interceptor; kubelet_started_pods_total (and _errors_total)
// and kubelet_started_containers_total{container_type} count the
// sandboxes and containers SyncPod sets out to start.
//
// A Runtime is safe for concurrent use by many pod workers; calls for one
// pod must not overlap.
package runtime
