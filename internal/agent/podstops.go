package agent

// podStops tells the loop that a pod has stopped for good (its containers
// and sandboxes are gone), so that a pod held back for its host ports is
// admitted at once, not at the next housekeeping: a static pod replacing
// another on the same host port (kube-apiserver's manifest edited, say)
// would otherwise wait up to a housekeeping period for nothing.
type podStops struct{ signal chan struct{} }

func newPodStops() *podStops { return &podStops{signal: make(chan struct{}, 1)} }

// stopped signals the loop; signals that come before it looks are one.
func (p *podStops) stopped() {
	select {
	case p.signal <- struct{}{}:
	default:
	}
}
