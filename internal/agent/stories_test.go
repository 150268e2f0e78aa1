package agent

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

var rewriteStories = flag.Bool("rewrite", false, "rewrite the expected output of testdata/stories/*.txt with what the stories print")

// TestStories replays each testdata/stories/*.txt story against the sync
// loop's update handler, with the real pod manager, status store and
// admission, and recording fakes for the parts it tells: the pod workers,
// the checkpoint keeper, API sync and the ConfigMap/Secret readers. A
// story is a list of blocks, as in staging/podworkers/testdata:
//
//	# why this step matters
//	command arg key=value
//	----
//	the calls it made, one a line, up to a blank line ("ok": none)
//
// Commands:
//
//	add|update|delete|remove|reconcile KIND name=N [v=K] [port=P] [cpu=C]
//	    [deleting] [grace=G] [phase=PHASE] [gate=COND] [cond=True|False]
//	    [sysctl=NAME]
//	                 one config update of one pod; KIND is static (from
//	                 a file; UID N-vK), mirror (of static pod N; UID
//	                 mirror-N) or api (from the apiserver; UID N)
//	event uid=U      the PLEG saw the pod's containers change
//	stopped uid=U    no container of the pod runs any more
//	readmit          housekeeping's admission pass (host ports, Node)
//	node             the Node becomes known (connected mode runs)
//	restored uid=U   the checkpoint brought the pod back at start
//	completed uid=U phase=PHASE   the checkpoint holds its final status
//	synced uid=U [gate=COND cond=True|False]   a sync wrote its status
//	status uid=U     the status store's phase and reason of the pod
//	pods             the UIDs the pod manager holds
//
// With -rewrite the expected output is replaced by the actual output;
// review the diff before keeping it.
func TestStories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "stories", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no stories: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runStory(t, file)
		})
	}
}

type storyBlock struct {
	pre  []string // comments and blank lines before the command
	cmd  string
	want []string
	line int
}

func runStory(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blocks, tail, err := parseStory(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	e := newStoryEnv(t)
	for i := range blocks {
		b := &blocks[i]
		got := e.do(b.cmd)
		if len(got) == 0 {
			got = []string{"ok"}
		}
		if *rewriteStories {
			b.want = got
			continue
		}
		if diff := cmp.Diff(b.want, got); diff != "" {
			t.Errorf("%s:%d: %s: output differs (-want +got):\n%s", file, b.line, b.cmd, diff)
		}
	}
	if *rewriteStories {
		var sb strings.Builder
		for _, b := range blocks {
			for _, l := range b.pre {
				sb.WriteString(l + "\n")
			}
			sb.WriteString(b.cmd + "\n----\n" + strings.Join(b.want, "\n") + "\n")
		}
		sb.WriteString(strings.Join(tail, "\n"))
		if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parseStory(s string) (blocks []storyBlock, tail []string, err error) {
	lines := strings.Split(s, "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := storyBlock{pre: pre, cmd: l, line: i + 1}
		pre = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return nil, nil, fmt.Errorf("line %d: command %q has no ---- line", i+1, l)
		}
		for i += 2; i < len(lines) && lines[i] != ""; i++ {
			b.want = append(b.want, lines[i])
		}
		i-- // the blank line that ended the block belongs to the next one
		blocks = append(blocks, b)
	}
	return blocks, pre, nil
}

// storyEnv is a sync loop with recording fakes; every fake appends what
// it was told to out, which each step prints and empties.
type storyEnv struct {
	t     *testing.T
	loop  *syncLoop
	clock *clocktesting.FakeClock
	node  *corev1.Node
	out   []string
	// running are the pods the fake workers may have running containers of.
	running map[types.UID]bool
	// terminating are the pods the fake workers were asked to kill.
	terminating map[types.UID]bool
	restored    map[types.UID]bool
	final       map[types.UID]*corev1.PodStatus
}

func newStoryEnv(t *testing.T) *storyEnv {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sysctls, err := admission.NewSysctls(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &storyEnv{
		t: t, clock: clk,
		running: map[types.UID]bool{}, terminating: map[types.UID]bool{},
		restored: map[types.UID]bool{}, final: map[types.UID]*corev1.PodStatus{},
		node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("10"),
		}}},
	}
	e.loop = &syncLoop{
		pods: podmanager.New(), workers: storyWorkers{e}, ckpt: storyKeeper{e}, api: storyAPISync{e}, objects: storyObjects{e},
		deadlines: newDeadlines(), admission: admission.NewHostPorts(), sysctls: sysctls,
		waiting:  admission.NewWaiting(),
		statuses: status.NewStore(), podEvents: newPodEvents(nil, "node-1"),
		timeline: timeline.NewWithClock(10, clk), clock: clk,
		log: testr.NewWithOptions(t, testr.Options{Verbosity: 2}).WithName("loop"),
	}
	e.loop.handlers = newPodHandlers(e.loop)
	return e
}

func (e *storyEnv) say(format string, args ...any) {
	e.out = append(e.out, fmt.Sprintf(format, args...))
}

func (e *storyEnv) do(line string) []string {
	e.out = nil
	f := strings.Fields(line)
	cmd, args := f[0], storyArgs(f[1:])
	switch cmd {
	case "add", "update", "delete", "remove", "reconcile":
		ops := map[string]podtypes.Op{"add": podtypes.ADD, "update": podtypes.UPDATE, "delete": podtypes.DELETE, "remove": podtypes.REMOVE, "reconcile": podtypes.RECONCILE}
		pod := e.pod(args)
		src, _ := podtypes.PodSource(pod)
		e.loop.handleUpdate(podtypes.PodUpdate{Op: ops[cmd], Source: src, Pods: []*corev1.Pod{pod}})
	case "event":
		e.loop.handleEvent(pleg.PodLifecycleEvent{ID: types.UID(args.get("uid")), Type: pleg.ContainerStarted})
	case "stopped":
		delete(e.running, types.UID(args.get("uid")))
	case "readmit":
		e.loop.readmit()
	case "node":
		var get mirror.NodeGetter = mirror.NodeGetterFunc(func(context.Context) (*corev1.Node, error) { return e.node, nil })
		e.loop.waiting.Connected(get)
	case "restored":
		e.restored[types.UID(args.get("uid"))] = true
	case "completed":
		e.final[types.UID(args.get("uid"))] = &corev1.PodStatus{Phase: corev1.PodPhase(args.get("phase"))}
	case "synced":
		uid := types.UID(args.get("uid"))
		pod, ok := e.loop.pods.PodByUID(uid)
		if !ok {
			e.t.Fatalf("%s: no pod %s", line, uid)
		}
		st := corev1.PodStatus{Phase: corev1.PodRunning}
		if gate := args.get("gate"); gate != "" {
			st.Conditions = []corev1.PodCondition{{Type: corev1.PodConditionType(gate), Status: corev1.ConditionStatus(args.get("cond"))}}
		}
		e.loop.statuses.Set(pod, st)
	case "status":
		st := e.loop.statuses.Status(types.UID(args.get("uid")))
		if st == nil {
			e.say("none")
			break
		}
		e.say("%s", strings.TrimSpace(string(st.Phase)+" "+st.Reason))
	case "pods":
		var uids []string
		for _, pod := range e.loop.pods.Pods() {
			uids = append(uids, string(pod.UID))
		}
		slices.Sort(uids)
		if len(uids) == 0 {
			uids = []string{"none"}
		}
		e.say("%s", strings.Join(uids, " "))
	default:
		e.t.Fatalf("unknown command %q", line)
	}
	return e.out
}

type storyArgValues map[string]string

// storyArgs parses key=value and bare words (a word maps to "").
func storyArgs(words []string) storyArgValues {
	out := storyArgValues{}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		out[k] = v
	}
	return out
}

func (a storyArgValues) get(k string) string { return a[k] }

func (a storyArgValues) has(k string) bool {
	_, ok := a[k]
	return ok
}

// pod builds the pod a config update command names.
func (e *storyEnv) pod(a storyArgValues) *corev1.Pod {
	name, v := a.get("name"), a.get("v")
	if v == "" {
		v = "1"
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Annotations: map[string]string{}},
		Spec: corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "main", Image: "busybox:" + v}}},
	}
	switch {
	case a.has("static"):
		pod.Name, pod.UID = name+"-node-1", types.UID(name+"-v"+v)
		pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.FileSource)
		pod.Annotations[podtypes.ConfigHashAnnotationKey] = string(pod.UID)
	case a.has("mirror"):
		pod.Name, pod.UID = name+"-node-1", types.UID("mirror-"+name)
		pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.APIServerSource)
		pod.Annotations[podtypes.ConfigMirrorAnnotationKey] = name + "-v" + v
	case a.has("api"):
		pod.Name, pod.UID = name, types.UID(name)
		pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.APIServerSource)
	default:
		e.t.Fatalf("a pod needs a kind: static, mirror or api")
	}
	c := &pod.Spec.Containers[0]
	if p := a.get("port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			e.t.Fatal(err)
		}
		c.Ports = []corev1.ContainerPort{{ContainerPort: int32(n), HostPort: int32(n)}}
	}
	if cpu := a.get("cpu"); cpu != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	if sc := a.get("sysctl"); sc != "" {
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: sc, Value: "1"}}}
	}
	if a.has("deleting") {
		now := metav1.NewTime(e.clock.Now())
		pod.DeletionTimestamp = &now
	}
	if g := a.get("grace"); g != "" {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil {
			e.t.Fatal(err)
		}
		pod.DeletionGracePeriodSeconds = &n
	}
	pod.Status.Phase = corev1.PodPhase(a.get("phase"))
	if gate := a.get("gate"); gate != "" {
		pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: corev1.PodConditionType(gate)}}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodConditionType(gate), Status: corev1.ConditionStatus(a.get("cond"))}}
	}
	return pod
}

// storyWorkers stands in for the pod workers: it prints each update and
// remembers which pods may run and which were asked to stop.
type storyWorkers struct{ e *storyEnv }

func (w storyWorkers) UpdatePod(o podworkers.UpdatePodOptions) error {
	var uid types.UID
	var parts []string
	switch {
	case o.Pod != nil:
		uid = o.Pod.UID
		if o.Pod.Status.Phase != "" {
			parts = append(parts, "phase="+string(o.Pod.Status.Phase))
		}
	case o.RuntimePod != nil:
		uid = o.RuntimePod.UID
		parts = append(parts, "runtime-pod")
	}
	if k := o.Kill; k != nil {
		if k.GracePeriodOverride != nil {
			parts = append(parts, fmt.Sprintf("grace=%d", *k.GracePeriodOverride))
		}
		if k.MayBeRunning {
			parts = append(parts, "may-be-running")
		}
		if k.StatusFunc != nil {
			var st corev1.PodStatus
			k.StatusFunc(&st)
			keeps := "keeps=" + string(st.Phase)
			if st.Reason != "" {
				keeps += "/" + st.Reason
			}
			parts = append(parts, keeps)
		}
	}
	w.e.say("workers: %s", strings.Join(append([]string{o.Type.String(), string(uid)}, parts...), " "))
	switch o.Type {
	case podworkers.Kill:
		w.e.terminating[uid] = true
	case podworkers.Create, podworkers.Update:
		w.e.running[uid] = true
	}
	return nil
}

func (w storyWorkers) IsPodTerminationRequested(uid types.UID) bool  { return w.e.terminating[uid] }
func (w storyWorkers) CouldHaveRunningContainers(uid types.UID) bool { return w.e.running[uid] }
func (w storyWorkers) DuePods() []types.UID                          { return nil }

// storyKeeper stands in for the checkpoint keeper. It prints what it
// records: as the real keeper, it records static pods only.
type storyKeeper struct{ e *storyEnv }

func (k storyKeeper) Accepted(pod *corev1.Pod) {
	if podtypes.IsStaticPod(pod) && !podtypes.IsMirrorPod(pod) {
		k.e.say("ckpt: accepted %s", pod.UID)
	}
}

func (k storyKeeper) ForgetCompleted(uid types.UID) {
	if k.e.final[uid] != nil {
		k.e.say("ckpt: forgot completed %s", uid)
		delete(k.e.final, uid)
	}
}

func (k storyKeeper) FinalStatus(uid types.UID) *corev1.PodStatus { return k.e.final[uid] }
func (k storyKeeper) WasRestored(uid types.UID) bool              { return k.e.restored[uid] }

// storyAPISync stands in for API sync.
type storyAPISync struct{ e *storyEnv }

func (s storyAPISync) StaticPodChanged(pod *corev1.Pod) { s.e.say("api: static changed %s", pod.UID) }
func (s storyAPISync) StaticPodRemoved(pod *corev1.Pod) { s.e.say("api: static removed %s", pod.UID) }
func (s storyAPISync) MirrorPodChanged(pod *corev1.Pod) { s.e.say("api: mirror changed %s", pod.UID) }
func (s storyAPISync) MirrorPodRemoved(pod *corev1.Pod) { s.e.say("api: mirror removed %s", pod.UID) }
func (s storyAPISync) APIPodChanged(pod *corev1.Pod)    { s.e.say("api: pod changed %s", pod.UID) }
func (s storyAPISync) APIPodRemoved(pod *corev1.Pod)    { s.e.say("api: pod removed %s", pod.UID) }

// storyObjects stands in for the ConfigMap and Secret readers.
type storyObjects struct{ e *storyEnv }

func (o storyObjects) RegisterPod(pod *corev1.Pod)   { o.e.say("objects: registered %s", pod.UID) }
func (o storyObjects) UnregisterPod(pod *corev1.Pod) { o.e.say("objects: unregistered %s", pod.UID) }
