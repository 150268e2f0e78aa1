// Package cgroups lays out the pods' cgroups by quality of service class,
// as the kubelet does with cgroupsPerQOS: under the configured root, a
// kubepods cgroup holds the Guaranteed pods directly and a burstable and a
// besteffort cgroup hold the others, each pod in a cgroup of its own
// (pod<uid>). The runtime makes each pod's containers under it by naming it
// as the sandbox's cgroup parent.
//
//	/nodeagent/kubepods/pod<uid>                 Guaranteed
//	/nodeagent/kubepods/burstable/pod<uid>       cpu.shares = the pods' requests
//	/nodeagent/kubepods/besteffort/pod<uid>      cpu.shares = 2
//
// A pod's cgroup is made before its sandbox, with the pod's totals as
// limits: CPU shares from its requests, a CFS quota when every container
// limits CPU, a memory limit when every container limits memory (init
// containers count by the largest, the pod's overhead on top). The
// burstable cgroup's shares follow the Burstable pods as they come and go.
//
// Two drivers name the same tree: cgroupfs by paths, as above, and systemd
// by slices (kubepods.slice/kubepods-burstable.slice/
// kubepods-burstable-pod<uid with - as _>.slice); with systemd the runtime
// is given the slice form. Either way the cgroups are written through the
// cgroup filesystem, cgroup v1 (cpu.shares, cpu.cfs_quota_us,
// memory.limit_in_bytes) or v2 (cpu.weight, cpu.max, memory.max), which
// New finds by itself. The systemd driver needs a running systemd: New
// refuses it without one.
//
//	m, err := cgroups.New(cgroups.Options{Root: "/nodeagent"})
//	err = m.Setup()                        // the QoS cgroups, once at start
//	parent := m.PodParent(pod)             // the sandbox's cgroup parent
//	err = m.EnsurePod(pod)                 // before the sandbox
//	err = m.RemovePod(ctx, pod.UID)        // once the runtime has let go
//
// A pod started by an earlier version lives in the flat <root>/pod<uid>:
// PodParent keeps it there (its new containers join its sandbox) and
// RemovePod removes that cgroup too, so that pods started before an
// upgrade run on and are cleaned up like the others.
//
// With Options.Registry, each cgroup made, written again or removed is
// timed as the kubelet's kubelet_cgroup_manager_duration_seconds
// {operation_type=create|update|destroy}.
package cgroups
