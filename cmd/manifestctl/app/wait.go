package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// pollInterval is how often --wait asks the agent. The local API answers
// from memory over a unix socket in well under a millisecond, so a short
// interval costs little and keeps apply --wait close to the agent's own
// time to run the pod.
const pollInterval = 5 * time.Millisecond

// failureLogLines is how much of a failing container's log --wait shows.
const failureLogLines = 20

// podFailed is why a pod generation fails: the agent refused it, it
// failed, or a container exited with an error or crash-loops.
type podFailed struct {
	pod    string
	reason string
	logs   string // the failing container's last lines, if any
}

func (e *podFailed) Error() string {
	s := "pod " + e.pod + " failed: " + e.reason
	if e.logs != "" {
		s += "\nlast lines of its log:\n" + e.logs
	}
	return s
}

// waitRunning polls the agent until every pod runs (or, run to completion,
// succeeded) under the UID that the manifest at target hashes to.
func (c *cli) waitRunning(ctx context.Context, client *localapi.Client, target string, pods []*corev1.Pod, s settle) error {
	start := time.Now()
	seen := sightings{}
	pending := make(map[types.UID]*corev1.Pod, len(pods))
	for _, p := range pods {
		pending[p.UID] = p
	}
	prog := progress{w: c.errOut, start: start}
	for {
		// The next poll comes at pollInterval, or as a settle runs out.
		seen.next = pollInterval
		pods, err := client.Pods(ctx)
		if err != nil && ctx.Err() == nil {
			return err
		}
		byUID := map[types.UID]localapi.Pod{}
		for _, got := range pods {
			want := pending[types.UID(got.UID)]
			if want == nil {
				continue
			}
			byUID[want.UID] = got
			seen.note(got.Containers, time.Now())
			done, failure := c.judge(got, want, s, &seen)
			if failure != nil {
				return failure
			}
			if done {
				fmt.Fprintf(c.out, "pod/%s %s (uid %s) after %v\n", got.Name, strings.ToLower(got.Phase), got.UID, time.Since(start).Round(time.Millisecond))
				delete(pending, want.UID)
			}
		}
		if len(pending) == 0 {
			return nil
		}
		prog.report(time.Now(), pending, byUID)
		select {
		case <-ctx.Done():
			return c.waitTimedOut(client, target, pending)
		case <-time.After(seen.next):
		}
	}
}

// sighting is when --wait first saw a container running, and first saw the
// agent watching its process: the status says when a container started
// only to the second.
type sighting struct{ running, watched time.Time }

// sightings are by container ID; next is how long until the next poll,
// which settled shortens to when an unfinished settle runs out.
type sightings struct {
	by   map[string]sighting
	next time.Duration
}

func (s *sightings) note(cs []localapi.Container, now time.Time) {
	if s.by == nil {
		s.by = map[string]sighting{}
	}
	for _, ct := range cs {
		if ct.State != localapi.StateRunning {
			continue
		}
		x := s.by[ct.ContainerID]
		if x.running.IsZero() {
			x.running = now
		}
		if x.watched.IsZero() && ct.Process == localapi.ProcessWatched {
			x.watched = now
		}
		s.by[ct.ContainerID] = x
	}
}

// settled tells whether a running container has been seen long enough.
func (s *sightings) settled(ct localapi.Container, st settle) bool {
	x := s.by[ct.ContainerID]
	if x.running.IsZero() {
		return false
	}
	left := st.unwatched - time.Since(x.running)
	// The watched settle holds only while the agent still watches the
	// process: between the runtime's record of an exit and the agent's
	// status, a container shows running with no process.
	if !x.watched.IsZero() && ct.Process == localapi.ProcessWatched {
		left = min(left, st.watched-time.Since(x.watched))
	}
	if left <= 0 {
		return true
	}
	s.next = min(s.next, left)
	return false
}

// judge tells whether the agent's pod runs as want asks, every container
// seen running for its settle at least, or has failed.
func (c *cli) judge(got localapi.Pod, want *corev1.Pod, s settle, seen *sightings) (done bool, failure error) {
	fail := func(reason, container string) error {
		return &podFailed{pod: got.Name, reason: reason, logs: c.lastLogLines(got, container, failureLogLines)}
	}
	if got.WorkerPhase == "refused" {
		return false, fail("refused by the agent: "+join(got.Reason, got.Message), "")
	}
	if got.Phase == string(corev1.PodFailed) {
		return false, fail(join(got.Reason, got.Message), lastFailed(got))
	}
	for _, ct := range append(append([]localapi.Container{}, got.InitContainers...), got.Containers...) {
		switch {
		case ct.State == localapi.StateTerminated && ct.ExitCode != nil && *ct.ExitCode != 0:
			return false, fail(fmt.Sprintf("container %s exited with code %d (%s)", ct.Name, *ct.ExitCode, join(ct.Reason, ct.Message)), ct.Name)
		case ct.LastTermination != nil && ct.LastTermination.ExitCode != 0:
			return false, fail(fmt.Sprintf("container %s exited with code %d (%s), now %s", ct.Name, ct.LastTermination.ExitCode, join(ct.LastTermination.Reason, ct.LastTermination.Message), join(ct.State, join(ct.Reason, ct.Message))), ct.Name)
		case ct.State == localapi.StateWaiting && isStuck(ct.Reason):
			return false, fail(fmt.Sprintf("container %s cannot start: %s", ct.Name, join(ct.Reason, ct.Message)), "")
		}
	}
	if got.Phase == string(corev1.PodSucceeded) {
		return true, nil
	}
	if got.Phase != string(corev1.PodRunning) || len(got.Containers) != len(want.Spec.Containers) {
		return false, nil
	}
	for _, ct := range got.Containers {
		switch {
		case ct.State == localapi.StateTerminated: // exited 0: judged above
		case ct.State != localapi.StateRunning:
			return false, nil
		case ct.Process == localapi.ProcessExited:
			return false, nil // the runtime is about to record how it ended
		case !seen.settled(ct, s):
			return false, nil
		}
	}
	return true, nil
}

// isStuck tells a waiting reason that no retry soon fixes, as kubectl's
// users know them.
func isStuck(reason string) bool {
	switch reason {
	case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
		"CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff":
		return true
	}
	return false
}

func lastFailed(p localapi.Pod) string {
	for _, ct := range p.Containers {
		if ct.State == localapi.StateTerminated && ct.ExitCode != nil && *ct.ExitCode != 0 {
			return ct.Name
		}
	}
	return ""
}

// waitTimedOut says what the agent shows of the pods it did not run.
func (c *cli) waitTimedOut(client *localapi.Client, target string, pending map[types.UID]*corev1.Pod) error {
	ctx, cancel := context.WithTimeout(context.Background(), agentProbeTimeout)
	defer cancel()
	var why []string
	if errs, err := client.ManifestErrors(ctx); err == nil {
		for _, e := range errs.Files {
			if e.Origin == target {
				why = append(why, "the agent refuses "+target+": "+e.Message)
			}
		}
	}
	pods, _ := client.Pods(ctx)
	for _, want := range pending {
		state := "not seen by the agent yet"
		for _, p := range pods {
			if p.UID == string(want.UID) {
				state = "still " + join(statusOf(p), p.Message)
			}
		}
		why = append(why, fmt.Sprintf("pod %s (uid %s): %s", want.Name, want.UID, state))
	}
	return errors.New("timed out waiting: " + strings.Join(why, "; "))
}

// waitGone polls the agent until no pod of uids is left but terminated.
func (c *cli) waitGone(ctx context.Context, client *localapi.Client, uids map[types.UID]string) error {
	for {
		seen, err := client.Pods(ctx)
		if err != nil && ctx.Err() == nil {
			return err
		}
		left := []string{}
		for _, p := range seen {
			if _, ok := uids[types.UID(p.UID)]; ok && p.WorkerPhase != "terminated" {
				left = append(left, p.Name)
			}
		}
		if err == nil && len(left) == 0 {
			for _, name := range uids {
				fmt.Fprintf(c.out, "pod/%s gone\n", name)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for pods to stop: %s", strings.Join(left, ", "))
		case <-time.After(pollInterval):
		}
	}
}

// join writes a reason and its message as one phrase.
func join(reason, message string) string {
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}
