// Package exitwatch tells, within a millisecond or so, that a container's
// process has exited, so that the agent need not wait for its next relist
// of the runtime to notice.
//
// CRI v1 runtimes before containerd 1.7 send no container events, and the
// kubelet notices an exit at its next relist, up to a second later. Linux
// has a cheaper way: a pidfd (pidfd_open(2)) of the container's first
// process becomes readable the moment that process exits. The Watcher
// opens one per running container and waits on it in Go's poller, one
// parked goroutine each.
//
//	w, err := exitwatch.New(exitwatch.Options{PID: rt.ContainerPID, Exited: relistNow})
//	go w.Run(ctx)
//	w.Watch(id)                 // after a start, or for each running container a relist sees
//	w.Retain(func(id string) bool { return running[id] })
//
// The PID comes from the runtime (the CRI's verbose container status).
// Before trusting it, the Watcher checks that the process's cgroup names
// the container: an agent in another PID namespace than the runtime's
// would otherwise watch some unrelated process. When that check fails the
// Watcher turns itself off, says so once in the log, and exits are noticed
// at the relist, as before.
package exitwatch
