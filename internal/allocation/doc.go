// Package allocation remembers, per API pod, the cpu and memory each
// container was allocated: its spec's at admission, then what each resize
// the node accepted asked (pods/resize changes an API pod's spec; the node
// decides whether and when the pod gets it). A resize the node cannot give
// now waits, Deferred, or never, Infeasible (admission.AdmitResize): the
// pod runs on with what it was allocated (Store.Apply gives the pod as it
// is to run), and the status reports the resize pending.
//
// It also remembers what an in-place resize gave each running container
// (runtime.ResizeRecords), which the container's annotations cannot say.
// Both survive a restart of the agent in one small JSON file under the
// root directory, so that a restarted agent neither admits a resize again
// nor mistakes a resized container for one that needs resizing.
//
//	s, err := allocation.Open(filepath.Join(rootDir, "allocated-resources.json"))
//	err = s.Allocate(pod)              // admitted, or its resize accepted
//	s.SetPending(pod.UID, pending)     // or the zero Pending
//	run := s.Apply(pod)                // the pod with its allocated resources
//	s.Remove(pod.UID)                  // once it is gone
//	s.Prune(wanted)                    // housekeeping: pods gone unseen
//
// A Store is safe for concurrent use.
package allocation
