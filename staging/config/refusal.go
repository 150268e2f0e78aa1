package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// eventReasonFailedValidation is the event reason of every refusal, the
// one the kubelet uses, so existing alerts keep matching.
const eventReasonFailedValidation = "FailedValidation"

// Refusal is a pod the merger refused and still holds back: it is admitted
// as soon as its full name is free.
type Refusal struct {
	Source   podtypes.Source
	FullName string
	UID      types.UID
	Reason   manifest.Reason
	Message  string
}

type refusal struct {
	Refusal
	pod *corev1.Pod
}

// Refused lists the pods the merger currently holds back, by source and
// full name.
func (m *Merger) Refused() []Refusal {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Refusal
	for _, s := range podtypes.Sources() {
		for _, r := range m.refused[s] {
			out = append(out, r.Refusal)
		}
	}
	slices.SortFunc(out, func(a, b Refusal) int {
		return cmp.Or(cmp.Compare(sourceIndex(a.Source), sourceIndex(b.Source)),
			cmp.Compare(a.FullName, b.FullName), cmp.Compare(a.UID, b.UID))
	})
	return out
}

// refuse records, reports and holds back a pod; m.mu is held.
func (m *Merger) refuse(src podtypes.Source, pod *corev1.Pod, reason manifest.Reason, why string) {
	msg := fmt.Sprintf("pod %s (uid %s) from source %s refused: %s", podtypes.PodFullName(pod), pod.UID, src, why)
	if origin := podtypes.ConfigOrigin(pod); origin != "" {
		msg = fmt.Sprintf("pod %s (uid %s) from %s refused: %s", podtypes.PodFullName(pod), pod.UID, origin, why)
	}
	m.log.Error(nil, "Refusing pod", "source", src, "pod", podtypes.PodFullName(pod), "uid", pod.UID, "reason", reason, "detail", why)
	var about runtime.Object = pod
	if src != podtypes.APIServerSource && m.nodeRef != nil {
		about = m.nodeRef
	}
	m.rec.Eventf(about, corev1.EventTypeWarning, eventReasonFailedValidation, "%s", msg)
	m.metrics.countRefused(src, reason)
	if pod.UID == "" {
		return // cannot be tracked, and never admissible
	}
	if m.refused[src] == nil {
		m.refused[src] = make(map[types.UID]*refusal)
	}
	m.refused[src][pod.UID] = &refusal{
		Refusal: Refusal{Source: src, FullName: podtypes.PodFullName(pod), UID: pod.UID, Reason: reason, Message: msg},
		pod:     pod,
	}
}

// readmit admits held-back pods whose full name is now free, in source
// order then by name; m.mu is held.
func (m *Merger) readmit(src podtypes.Source, d *diff) {
	for _, s := range podtypes.Sources() {
		held := make([]*corev1.Pod, 0, len(m.refused[s]))
		for _, r := range m.refused[s] {
			held = append(held, r.pod)
		}
		slices.SortFunc(held, comparePods)
		for _, pod := range held {
			full := podtypes.PodFullName(pod)
			if _, taken := m.names[full]; taken {
				continue
			}
			delete(m.refused[s], pod.UID)
			m.names[full] = holder{source: s, uid: pod.UID}
			m.stampSeen(pod)
			if m.pods[s] == nil {
				m.pods[s] = make(map[types.UID]*corev1.Pod)
			}
			m.pods[s][pod.UID] = pod
			m.log.Info("Admitting a pod whose full name was freed", "source", s, "pod", full, "uid", pod.UID)
			if s == src {
				d.adds = append(d.adds, pod)
				continue
			}
			if d.readmitted == nil {
				d.readmitted = make(map[podtypes.Source][]*corev1.Pod)
			}
			d.readmitted[s] = append(d.readmitted[s], pod)
		}
	}
}

func sourceIndex(s podtypes.Source) int {
	return slices.Index(podtypes.Sources(), s)
}

// reasonOf returns the reason of a refusal, or ReasonRead for other errors.
func reasonOf(err error) manifest.Reason {
	var me *manifest.ManifestError
	if errors.As(err, &me) {
		return me.Reason
	}
	return manifest.ReasonRead
}
