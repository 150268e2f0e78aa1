// Package mirrorsync keeps one mirror pod in the apiserver for each static
// pod the agent runs, and none for static pods that are gone.
//
// A Reconciler works on full names (name_namespace). The agent tells it
// which names changed (a static pod added, changed or removed; a mirror pod
// seen, changed or deleted) and it decides, from the pod manager's indexes
// alone, what the apiserver must hold under that name:
//
//	static pod, no mirror               create the mirror
//	static pod, mirror of another hash  delete it (UID precondition), create
//	static pod, mirror being deleted    delete it at once (grace 0), create
//	no static pod, a mirror             delete it (UID precondition), once
//	                                    every source has sent its pods
//	static pod NodeRestriction refuses  no mirror; say why (local API, and
//	                                    an event on the Node), run it anyway
//
// It never reads the apiserver to decide: the mirrors it sees are those the
// pod manager learned from the apiserver source's watch. A mirror it has
// just created and not yet seen is remembered, so that it is not created
// twice while the watch catches up. Failures are retried from a rate-limited
// work queue, and every name is looked at again periodically, so that
// everything converges after the apiserver comes back.
package mirrorsync
