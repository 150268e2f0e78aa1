package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

func TestProgressIsQuietForASecondThenSaysEachChange(t *testing.T) {
	var w bytes.Buffer
	start := time.Unix(1000, 0)
	p := progress{w: &w, start: start}
	pending := map[types.UID]*corev1.Pod{"u1": wanted("u1")}
	pendingPod := localapi.Pod{Name: "web-" + testNode, Phase: "Pending", Containers: []localapi.Container{{Name: "c", State: localapi.StateWaiting, Reason: "ContainerCreating"}}}

	p.report(start.Add(500*time.Millisecond), pending, nil)
	if w.Len() != 0 {
		t.Fatalf("before a second: %q", w.String())
	}
	p.report(start.Add(1100*time.Millisecond), pending, nil)
	p.report(start.Add(1200*time.Millisecond), pending, nil) // no change: no line
	p.report(start.Add(2100*time.Millisecond), pending, map[types.UID]localapi.Pod{"u1": pendingPod})
	want := "Waiting for the new pod generation to run (1s so far): pod/web-node1: not seen by the agent yet\n" +
		"Waiting for the new pod generation to run (2s so far): pod/web-node1: ContainerCreating, 0/1 containers ready\n"
	if w.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", w.String(), want)
	}
}

func TestApplyWaitPrintsProgressOnStderrOnly(t *testing.T) {
	fake := &fakeAgent{}
	client := serve(t, fake)
	var out, errOut bytes.Buffer
	c := &cli{out: &out, errOut: &errOut, settings: settings{PodLogDir: t.TempDir()}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fake.set(info("new", corev1.PodPending))
	done := make(chan error)
	go func() {
		done <- c.waitRunning(ctx, client, "/m/web.yaml", []*corev1.Pod{wanted("new")}, settle{})
	}()
	// Let the wait pass its quiet second, pending; then run the pod.
	time.Sleep(progressAfter + 200*time.Millisecond)
	fake.set(info("new", corev1.PodRunning, running("containerd://new")))
	if err := <-done; err != nil {
		t.Fatalf("waitRunning: %v", err)
	}
	if !strings.Contains(errOut.String(), "pod/web-node1: Pending, 0/0 containers ready") || strings.Contains(out.String(), "Waiting") {
		t.Errorf("stdout %q, stderr %q; want the progress on stderr only", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "pod/web-node1 running (uid new)") {
		t.Errorf("stdout %q; want the outcome", out.String())
	}
}
