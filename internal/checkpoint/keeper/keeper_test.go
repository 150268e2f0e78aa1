package keeper

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func newTestKeeper(t *testing.T, store checkpoint.Store) (*Keeper, *keeperMetrics) {
	t.Helper()
	k, err := New(Options{Store: store, Registry: metrics.NewKubeRegistry(), Clock: clocktesting.NewFakeClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	return k, k.metrics
}

// staticPod returns a file-source pod whose UID hashes its spec, as the
// config module gives static pods theirs.
func staticPod(name, image string, policy corev1.RestartPolicy) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-node-1", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: policy,
			Containers:    []corev1.Container{{Name: "main", Image: image}},
		},
	}
	sum := sha256.Sum256([]byte(name + "/" + image + "/" + string(policy)))
	hash := fmt.Sprintf("%x", sum[:8])
	pod.UID = types.UID(hash)
	pod.Annotations = map[string]string{
		podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource),
		podtypes.ConfigHashAnnotationKey:   hash,
	}
	return pod
}

// stored renders the store as "uid=phase" lines, with "+final" for a
// record holding a final status.
func stored(t *testing.T, s checkpoint.Store) string {
	t.Helper()
	recs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s=%s", r.UID, r.Phase)
		if r.Final != nil {
			b.WriteString("+final")
		}
		b.WriteString(" ")
	}
	return strings.TrimSpace(b.String())
}

// Transcripts of changes and writes: whatever the order of the changes and
// wherever the writes fall between them, the store ends with each pod's
// newest state.
func TestKeeperTranscripts(t *testing.T) {
	a := staticPod("a", "busybox", corev1.RestartPolicyNever)
	final := corev1.PodStatus{Phase: corev1.PodSucceeded}
	gone := func(types.UID) bool { return true }
	wanted := func(types.UID) bool { return false }
	for _, tc := range []struct {
		name  string
		steps []string // accept, forget, forgetIfGone, forgetIfWanted, terminating, terminated, complete, running, write
		want  string
	}{
		{"accepted", []string{"accept", "write"}, "UID=running"},
		{"forgotten and re-added before a write", []string{"accept", "write", "forget", "accept", "write"}, "UID=running"},
		{"forgotten and re-added in one batch", []string{"accept", "forget", "accept", "write"}, "UID=running"},
		{"re-added, then forgotten", []string{"accept", "write", "accept", "forget", "write"}, ""},
		{"a termination then a re-add keeps the termination", []string{"accept", "terminating", "accept", "write"}, "UID=terminating"},
		{"the syncer's forget loses to a re-add", []string{"accept", "terminated", "write", "forgetIfWanted", "write"}, "UID=terminated"},
		{"the syncer's forget of a pod gone", []string{"accept", "terminated", "write", "forgetIfGone", "write"}, ""},
		{"completed keeps its final status when sent again", []string{"accept", "complete", "write", "accept", "write"}, "UID=terminated+final"},
		{"a completed pod run afresh drops its final status", []string{"accept", "complete", "running", "write"}, "UID=running"},
		{"a change of a pod not recorded is nothing", []string{"terminating", "complete", "write"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := checkpoint.NewMem()
			c, _ := newTestKeeper(t, store)
			for _, step := range tc.steps {
				switch step {
				case "accept":
					c.Accepted(a)
				case "forget":
					c.forget(a.UID)
				case "forgetIfGone":
					c.forgetIf(a.UID, gone)
				case "forgetIfWanted":
					c.forgetIf(a.UID, wanted)
				case "terminating":
					c.terminating(a.UID, 30)
				case "terminated":
					c.terminated(a.UID)
				case "complete":
					c.completed(a.UID, final)
				case "running":
					c.Running(a.UID)
				case "write":
					if err := c.write(); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := strings.ReplaceAll(tc.want, "UID", string(a.UID))
			if got := stored(t, store); got != want {
				t.Errorf("store = %q, want %q", got, want)
			}
		})
	}
}

// Random interleavings of changes, writes and failing writes: once a write
// succeeds, the store holds exactly what the keeper's memory says.
func TestKeeperRandomInterleavings(t *testing.T) {
	pods := []*corev1.Pod{
		staticPod("a", "busybox", corev1.RestartPolicyNever),
		staticPod("b", "busybox", corev1.RestartPolicyAlways),
		staticPod("c", "busybox", corev1.RestartPolicyOnFailure),
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	for round := range 300 {
		store := checkpoint.NewMem()
		c, _ := newTestKeeper(t, store)
		for range 20 {
			p := pods[rng.IntN(len(pods))]
			switch op := rng.IntN(8); op {
			case 0:
				c.Accepted(p)
			case 1:
				c.forget(p.UID)
			case 2:
				c.terminating(p.UID, 30)
			case 3:
				c.terminated(p.UID)
			case 4:
				c.completed(p.UID, corev1.PodStatus{Phase: corev1.PodFailed})
			case 5:
				c.Running(p.UID)
			case 6:
				store.Fail(errors.New("disk full"))
				_ = c.write()
				store.Fail(nil)
			case 7:
				_ = c.write()
			}
		}
		if err := c.write(); err != nil {
			t.Fatal(err)
		}
		recs, err := store.List()
		if err != nil {
			t.Fatal(err)
		}
		got := map[types.UID]checkpoint.PodRecord{}
		for _, r := range recs {
			got[r.UID] = r
		}
		want := map[types.UID]checkpoint.PodRecord{}
		c.mu.Lock()
		for uid, r := range c.recs {
			want[uid] = *r
		}
		c.mu.Unlock()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d round %d: store differs from memory (-memory +store):\n%s", seed, round, diff)
		}
	}
}

// A failed write is retried after a back-off, counted, and reported until
// a write succeeds; durable does not hold a pod up meanwhile.
func TestKeeperRetriesFailedWrites(t *testing.T) {
	store := checkpoint.NewMem()
	c, m := newTestKeeper(t, store)
	clk := c.clock.(*clocktesting.FakeClock)
	store.Fail(errors.New("no space left on device"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	a := staticPod("a", "busybox", corev1.RestartPolicyAlways)
	c.Accepted(a)
	if err := c.durable(ctx, a.UID); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("durable = %v, want the write's error", err)
	}
	if err := c.Problem(); err == nil || !strings.Contains(err.Error(), "1 change(s) not written") {
		t.Errorf("problem() = %v, want one change not written", err)
	}
	if n := counterValue(t, m.failures); n < 1 {
		t.Errorf("write failures counted: %v, want at least 1", n)
	}
	store.Fail(nil)
	waitFor(t, "the retry writes the pod", func() bool {
		clk.Step(checkpointRetryMax)
		return stored(t, store) == string(a.UID)+"=running"
	})
	waitFor(t, "the problem clears", func() bool { return c.Problem() == nil })
	if err := c.durable(ctx, a.UID); err != nil {
		t.Errorf("durable after the retry = %v", err)
	}
}

// durable waits for the write that holds the pod's change, also when that
// write is already under way.
func TestKeeperDurableWaitsForTheWrite(t *testing.T) {
	store := &blockingStore{Mem: checkpoint.NewMem(), release: make(chan struct{}), entered: make(chan struct{}, 1)}
	c, _ := newTestKeeper(t, store)
	a := staticPod("a", "busybox", corev1.RestartPolicyAlways)
	c.Accepted(a)
	writeDone := make(chan error)
	go func() { writeDone <- c.write() }()
	<-store.entered // the write has taken the change

	waited := make(chan error)
	go func() { waited <- c.durable(context.Background(), a.UID) }()
	select {
	case err := <-waited:
		t.Fatalf("durable returned (%v) before the write ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(store.release)
	if err := <-writeDone; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("durable = %v", err)
	}
	if got := stored(t, store); got != string(a.UID)+"=running" {
		t.Errorf("store = %q", got)
	}
}

// blockingStore holds every Apply until release is closed.
type blockingStore struct {
	*checkpoint.Mem
	release chan struct{}
	entered chan struct{}
	once    sync.Once
}

func (b *blockingStore) Apply(changes []checkpoint.Change) error {
	b.once.Do(func() { b.entered <- struct{}{} })
	<-b.release
	return b.Mem.Apply(changes)
}

func counterValue(t *testing.T, c *metrics.Counter) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
