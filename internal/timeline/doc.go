// Package timeline keeps a short, bounded log of what happened to each pod:
// when the agent saw its config, how its worker moved through its phases,
// which runtime actions were taken and which errors occurred. It is what the
// local API shows for a pod, and it works without an apiserver.
//
//	log := timeline.New(100)
//	log.Record(pod.UID, timeline.KindSeen, "ADD from %s", source)
//	for _, e := range log.Get(pod.UID) { // oldest first
//		fmt.Println(e.Time, e.Kind, e.Message)
//	}
//	log.Forget(pod.UID) // once the pod is gone
//
// Each pod keeps at most perPod entries; older ones are dropped first. A Log
// is safe for concurrent use.
package timeline
