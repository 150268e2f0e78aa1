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

// pressureConditions are the pressure conditions of the signals under
// pressure (eviction.Manager.Pressure): True while one of a condition's
// signals is met, and for the transition period after it recovered.
func pressureConditions(pressure map[string]bool) []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, 0, len(pressureKinds))
	for _, k := range pressureKinds {
		var met []string
		held := false
		for _, s := range k.signals {
			if now, ok := pressure[s]; ok && now {
				met = append(met, s)
			} else if ok {
				held = true
			}
		}
		c := corev1.NodeCondition{Type: k.condition, Status: corev1.ConditionFalse, Reason: k.fineReason, Message: k.fineMessage}
		switch {
		case len(met) > 0:
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, k.underReason, k.underMessage+": "+strings.Join(met, ", ")+" below its threshold"
		case held:
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
