package localapi

import (
	"cmp"
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

// toPod turns what the Provider knows about a pod into its wire form.
func toPod(in PodInfo) Pod {
	out := Pod{
		Source:      in.Source,
		ConfigHash:  in.ConfigHash,
		Origin:      in.Origin,
		WorkerPhase: in.WorkerPhase,
		Restored:    in.Restored,
		Adopted:     in.Adopted,
		Phase:       string(in.Status.Phase),
		Reason:      in.Status.Reason,
		Message:     in.Status.Message,
		PodIP:       in.Status.PodIP,
		StartTime:   timeOf(in.Status.StartTime),
		Mirror:      in.Mirror,
	}
	if p := in.Pod; p != nil {
		out.Namespace, out.Name, out.UID = p.Namespace, p.Name, string(p.UID)
		if out.Phase == "" {
			out.Phase = string(p.Status.Phase)
		}
	}
	for _, c := range in.Status.Conditions {
		out.Conditions = append(out.Conditions, Condition{Type: string(c.Type), Status: string(c.Status),
			Reason: c.Reason, Message: c.Message, LastTransitionTime: timeOf(&c.LastTransitionTime)})
	}
	out.InitContainers = toContainers(in.Status.InitContainerStatuses, in.Processes)
	out.Containers = toContainers(in.Status.ContainerStatuses, in.Processes)
	return out
}

func toContainers(in []corev1.ContainerStatus, processes map[string]string) []Container {
	if len(in) == 0 {
		return nil
	}
	out := make([]Container, 0, len(in))
	for _, cs := range in {
		c := Container{
			Name:         cs.Name,
			Image:        cs.Image,
			ContainerID:  cs.ContainerID,
			Ready:        cs.Ready,
			RestartCount: cs.RestartCount,
		}
		switch s := cs.State; {
		case s.Running != nil:
			c.State, c.StartedAt = StateRunning, timeOf(&s.Running.StartedAt)
			c.Process = processes[cs.ContainerID]
		case s.Terminated != nil:
			c.State, c.Reason, c.Message = StateTerminated, s.Terminated.Reason, s.Terminated.Message
			c.ExitCode, c.StartedAt = &s.Terminated.ExitCode, timeOf(&s.Terminated.StartedAt)
		case s.Waiting != nil:
			c.State, c.Reason, c.Message = StateWaiting, s.Waiting.Reason, s.Waiting.Message
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			c.LastTermination = &Termination{ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message, FinishedAt: timeOf(&t.FinishedAt)}
		}
		out = append(out, c)
	}
	return out
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	v := t.UTC()
	return &v
}

// toManifestErrors reports file refusals sorted by path, then the HTTP
// source's error.
func toManifestErrors(files map[string]error, url string, httpErr error) ManifestErrors {
	out := ManifestErrors{Files: make([]ManifestError, 0, len(files))}
	for path, err := range files {
		if err != nil {
			out.Files = append(out.Files, toManifestError(path, err))
		}
	}
	slices.SortFunc(out.Files, func(a, b ManifestError) int { return cmp.Compare(a.Origin, b.Origin) })
	if url != "" && httpErr != nil {
		e := toManifestError(url, httpErr)
		out.HTTP = &e
	}
	return out
}

// toManifestError names the fields of a *manifest.ManifestError; any other
// error is reported by its message alone.
func toManifestError(origin string, err error) ManifestError {
	out := ManifestError{Origin: origin, Message: err.Error()}
	var me *manifest.ManifestError
	if errors.As(err, &me) {
		out.Reason = string(me.Reason)
		for _, f := range me.Fields {
			if !slices.Contains(out.Fields, f.Field) {
				out.Fields = append(out.Fields, f.Field)
			}
		}
	}
	return out
}
