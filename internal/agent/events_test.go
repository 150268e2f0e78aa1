package agent

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

func TestPodEventsOfRuntimeActions(t *testing.T) {
	rec := record.NewFakeRecorder(40)
	rec.IncludeObject = true
	e := newPodEvents(rec, "node1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-node1", Namespace: "ns", UID: "h1"},
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "side", Image: "side:1"}}, Containers: []corev1.Container{{Name: "main", Image: "main:1"}}}}
	e.actions(pod, []runtime.Action{
		{Kind: runtime.ActionCreateSandbox, ID: "s1"},
		{Kind: runtime.ActionStartContainer, Container: "main", ID: "c1", Image: runtime.ImagePull{Image: "main:1"}},
		{Kind: runtime.ActionStartContainer, Container: "side", ID: "c2", Image: runtime.ImagePull{Image: "side:1", Pulled: true, Duration: 1500 * time.Millisecond, Size: 4096}},
		{Kind: runtime.ActionStartContainer, Container: "crashy", Err: fmt.Errorf("wait: %w", runtime.ErrCrashLoopBackOff)},
		{Kind: runtime.ActionStartContainer, Container: "bad", Err: errors.New("no such thing")},
		{Kind: runtime.ActionStartContainer, Container: "private", Err: &runtime.ImageError{Reason: runtime.ErrImagePull, Image: "r/x:1", Message: "401 Unauthorized"}},
		{Kind: runtime.ActionStartContainer, Container: "private", Err: &runtime.ImageError{Reason: runtime.ErrImagePullBackOff, Image: "r/x:1", Message: "Back-off pulling image"}},
		{Kind: runtime.ActionStartContainer, Container: "typo", Err: &runtime.ImageError{Reason: runtime.ErrInvalidImageName, Image: "X", Message: "Failed to apply default image tag \"X\": bad"}},
		{Kind: runtime.ActionStartContainer, Container: "never", Err: &runtime.ImageError{Reason: runtime.ErrImageNeverPull, Image: "n:1", Message: "Container image \"n:1\" is not present with pull policy of Never"}},
		{Kind: runtime.ActionKillContainer, Container: "old", ID: "c0", Reason: "its spec changed"},
	})
	e.unhealthy(pod, "main", "Readiness", "exit 1")
	e.warnings(pod, []runtime.Warning{
		{Reason: runtime.ReasonDNSConfigForming, Message: "cut"},
		{Reason: runtime.ReasonMissingClusterDNS, Message: "no cluster DNS", Node: true},
	})
	var got []string
	for len(rec.Events) > 0 {
		got = append(got, <-rec.Events)
	}
	ref := " involvedObject{kind=Pod,apiVersion=v1}"
	want := []string{
		"Normal Pulled Container image \"main:1\" already present on machine" + ref,
		"Normal Created Created container main" + ref,
		"Normal Started Started container main" + ref,
		"Normal Pulled Successfully pulled image \"side:1\" in 1.5s (1.5s including waiting). Image size: 4096 bytes." + ref,
		"Normal Created Created container side" + ref,
		"Normal Started Started container side" + ref,
		"Warning BackOff Back-off restarting failed container crashy" + ref,
		"Warning Failed Error: no such thing" + ref,
		"Warning Failed Failed to pull image \"r/x:1\": 401 Unauthorized" + ref,
		"Warning Failed Error: ErrImagePull" + ref,
		"Normal BackOff Back-off pulling image \"r/x:1\"" + ref,
		"Warning Failed Error: ImagePullBackOff" + ref,
		"Warning InspectFailed Failed to apply default image tag \"X\": bad" + ref,
		"Warning Failed Error: InvalidImageName" + ref,
		"Warning ErrImageNeverPull Container image \"n:1\" is not present with pull policy of Never" + ref,
		"Warning Failed Error: ErrImageNeverPull" + ref,
		"Normal Killing Stopping container old: its spec changed" + ref,
		"Warning Unhealthy Readiness probe of container main failed: exit 1" + ref,
		"Warning DNSConfigForming cut" + ref,
		"Warning MissingClusterDNS no cluster DNS" + ref,
		"Warning MissingClusterDNS no cluster DNS involvedObject{kind=Node,apiVersion=}",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	// Standalone: no recorder, nothing recorded, no panic.
	var none *podEvents
	none.actions(pod, []runtime.Action{{Kind: runtime.ActionStartContainer, Container: "main"}})
	newPodEvents(nil, "node1").stopping(pod, 30)
	newPodEvents(nil, "node1").pulling(pod, "main:1")
}
