package node

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/eviction"
)

// readiness is what the Ready condition is made of: each problem that
// keeps the node from running pods, with the reason reported for it.
type readiness struct {
	problems []problem
}

type problem struct{ reason, message string }

// The reasons of the Ready condition.
const (
	reasonReady           = "NodeAgentReady"
	reasonRuntimeNotReady = "RuntimeNotReady"
	reasonNetworkNotReady = "NetworkNotReady"
	reasonAgentNotHealthy = "PLEGNotHealthy"
	reasonSourcesNotReady = "SourcesNotReady"
)

func (r *readiness) add(reason, message string) {
	r.problems = append(r.problems, problem{reason, message})
}

// condition is Ready with the first problem's reason and every problem's
// message, so that the one to fix first is named and none is hidden.
func (r readiness) condition() corev1.NodeCondition {
	if len(r.problems) == 0 {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: reasonReady, Message: "nodeagent is posting ready status"}
	}
	msgs := make([]string, len(r.problems))
	for i, p := range r.problems {
		msgs[i] = p.message
	}
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: r.problems[0].reason, Message: strings.Join(msgs, "; ")}
}

// pressureKind is one pressure condition and the words it is reported with.
type pressureKind struct {
	condition                 corev1.NodeConditionType
	underReason, fineReason   string
	underMessage, fineMessage string
	signals                   []string
}

var pressureKinds = []pressureKind{
	{corev1.NodeMemoryPressure, "NodeAgentHasInsufficientMemory", "NodeAgentHasSufficientMemory",
		"node has memory pressure", "node has sufficient memory available", []string{eviction.SignalMemoryAvailable, eviction.SignalAllocatableMemoryAvailable}},
	{corev1.NodeDiskPressure, "NodeAgentHasDiskPressure", "NodeAgentHasNoDiskPressure",
		"node has disk pressure", "node has no disk pressure",
		[]string{eviction.SignalNodeFSAvailable, eviction.SignalNodeFSInodesFree, eviction.SignalImageFSAvailable, eviction.SignalImageFSInodesFree}},
	{corev1.NodePIDPressure, "NodeAgentHasInsufficientPID", "NodeAgentHasSufficientPID",
		"node has PID pressure", "node has sufficient PID available", []string{eviction.SignalPIDAvailable}},
}

// pressures remembers when each pressure was last seen, so that a
// condition stays True for the transition period after its signals
// recover: a node hovering at a threshold does not flap.
type pressures struct {
	lastSeen   map[corev1.NodeConditionType]time.Time
	transition time.Duration
}

func newPressures(transition time.Duration) *pressures {
	return &pressures{lastSeen: map[corev1.NodeConditionType]time.Time{}, transition: transition}
}

// conditions are the pressure conditions at now, with the signals whose
// eviction threshold is met (eviction.Manager.Met).
func (p *pressures) conditions(now time.Time, met []string) []corev1.NodeCondition {
	crossed := map[string]bool{}
	for _, s := range met {
		crossed[s] = true
	}
	out := make([]corev1.NodeCondition, 0, len(pressureKinds))
	for _, k := range pressureKinds {
		var which []string
		for _, s := range k.signals {
			if crossed[s] {
				which = append(which, s)
			}
		}
		if len(which) > 0 {
			p.lastSeen[k.condition] = now
		}
		seen, ever := p.lastSeen[k.condition]
		c := corev1.NodeCondition{Type: k.condition, Status: corev1.ConditionFalse, Reason: k.fineReason, Message: k.fineMessage}
		switch {
		case len(which) > 0:
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, k.underReason, k.underMessage+": "+strings.Join(which, ", ")+" below its threshold"
		case ever && now.Sub(seen) < p.transition:
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, k.underReason, k.underMessage+": recovered, held for the pressure transition period"
		}
		out = append(out, c)
	}
	return out
}

// carryTransitions sets each condition's transition time: kept from the
// same condition in old if its status did not change, now otherwise.
// Heartbeat times are set when the status is written, not here.
func carryTransitions(now time.Time, conds []corev1.NodeCondition, old []corev1.NodeCondition) {
	for i := range conds {
		conds[i].LastTransitionTime = metav1.NewTime(now)
		for _, o := range old {
			if o.Type == conds[i].Type && o.Status == conds[i].Status {
				conds[i].LastTransitionTime = o.LastTransitionTime
				conds[i].LastHeartbeatTime = o.LastHeartbeatTime
			}
		}
	}
}
