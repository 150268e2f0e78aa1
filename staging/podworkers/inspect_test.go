package podworkers

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// stateLines prints what the agent can ask about each pod (all known pods
// and any named ones), the static pod start gate, and how many worker
// goroutines are alive.
func (e *env) stateLines(named []types.UID) []string {
	p := e.pw
	p.mu.Lock()
	uids := slices.Collect(maps.Keys(p.workers))
	names := slices.Collect(maps.Keys(p.gate.started))
	for name := range p.gate.waiting {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	goroutines := p.goroutines
	phases := map[types.UID]string{}
	for uid, w := range p.workers {
		phases[uid] = w.state.phase().String()
	}
	p.mu.Unlock()

	for _, uid := range named {
		if !slices.Contains(uids, uid) {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	slices.Sort(names)
	var out []string
	for _, uid := range uids {
		phase, ok := phases[uid]
		if !ok {
			phase = "unknown"
		}
		out = append(out, fmt.Sprintf("%s: %s requested=%v could-run=%v terminated=%v finished=%v remove-content=%v",
			uid, phase, p.IsPodTerminationRequested(uid), p.CouldHaveRunningContainers(uid),
			p.IsPodKnownTerminated(uid), p.IsPodFinished(uid), p.ShouldPodContentBeRemoved(uid)))
	}
	p.mu.Lock()
	for _, name := range names {
		holder, ok := p.gate.holder(name)
		if !ok {
			holder = "-"
		}
		out = append(out, fmt.Sprintf("gate %s: started=%s waiting=%s", name, holder, uidList(p.gate.queue(name))))
	}
	p.mu.Unlock()
	return append(out, fmt.Sprintf("goroutines: %d", goroutines))
}

func (e *env) queueLines() []string {
	p := e.pw
	p.mu.Lock()
	entries := p.queue.entries()
	p.mu.Unlock()
	if len(entries) == 0 {
		return []string{"queue: empty"}
	}
	now := e.clock.Now()
	out := make([]string, len(entries))
	for i, en := range entries {
		out[i] = fmt.Sprintf("queue %s: due in %v", en.uid, en.at.Sub(now))
	}
	return out
}

func (e *env) metricLines() []string {
	phases, depth, syncs := e.metrics.snapshot()
	out := []string{
		fmt.Sprintf("workers: sync=%d terminating=%d terminated=%d", phases.Sync, phases.Terminating, phases.Terminated),
		fmt.Sprintf("queue depth: %d", depth),
	}
	for _, s := range syncs {
		out = append(out, fmt.Sprintf("sync duration: %v %v", s.work, s.d))
	}
	return out
}
