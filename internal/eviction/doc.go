// Package eviction is the node's answer to running short of memory, disk
// or process IDs, as the kubelet's eviction manager: the signals
// (Observer: memory.available, allocatableMemory.available from the pods'
// cgroup, nodefs and imagefs bytes and inodes, pid.available), the hard
// and soft thresholds on them (--eviction-hard, --eviction-soft with
// their grace periods, --eviction-minimum-reclaim), and the Manager that,
// while a threshold is met, first frees what the node itself holds on
// disk and then evicts pods one at a time in the kubelet's order: those
// over their requests first, then by priority, then by usage. Static,
// mirror and system-critical pods are never evicted.
//
// The Manager also says which signals are under pressure (Pressure: met,
// or met within --eviction-pressure-transition-period), which the node
// reports as its MemoryPressure, DiskPressure and PIDPressure conditions.
// Under cgroup v1 the kernel tells it when the pods' memory crosses the
// threshold, so it acts within a moment rather than at its next poll.
package eviction
