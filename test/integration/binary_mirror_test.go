package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	kubectldescribe "k8s.io/kubectl/pkg/describe"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Connected mode, part 2: mirror pods and pod status in the apiserver,
// written with the node's own identity under NodeRestriction.

// waitMirror polls the mirror pod of the static pod name (as the admin)
// until ok, or fails after timeout.
func (h *agentHarness) waitMirror(name, what string, timeout time.Duration, ok func(*corev1.Pod) bool) *corev1.Pod {
	h.t.Helper()
	return h.waitAPIPod(h.podName(name), "mirror pod: "+what, timeout, ok)
}

func describeAPIPod(p *corev1.Pod) string {
	if p == nil {
		return "no mirror pod"
	}
	s := fmt.Sprintf("%s uid %s rv %s deleting %v annotations %v phase %s\n", p.Name, p.UID, p.ResourceVersion, p.DeletionTimestamp != nil, p.Annotations, p.Status.Phase)
	for _, c := range p.Status.ContainerStatuses {
		s += fmt.Sprintf("  %s ready=%v restarts=%d state=%+v\n", c.Name, c.Ready, c.RestartCount, c.State)
	}
	return s
}

// mirrorRunning: the mirror of the current version of the static pod
// exists and its status says the container runs and is ready.
func mirrorRunning(hash string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		if p == nil || p.DeletionTimestamp != nil || p.Annotations[podtypes.ConfigMirrorAnnotationKey] != hash {
			return false
		}
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running == nil || !c.Ready {
				return false
			}
		}
		return true
	}
}

func mirrorGone(p *corev1.Pod) bool { return p == nil }

// localPod returns the static pod as the local API shows it.
func (h *agentHarness) localPod(name string) localapi.Pod {
	h.t.Helper()
	return h.waitPod(name, "listed", 10*time.Second, func(localapi.Pod) bool { return true })
}

func TestBinaryMirrorPods(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	node := waitNodeTB(t)

	h.writeManifest(testPod("web", shContainer("main", "while true; do sleep 1; done")))
	p := h.waitPod("web", "running", 30*time.Second, runningContainer("main"))
	m := h.waitMirror("web", "created and Running", 10*time.Second, mirrorRunning(p.ConfigHash))

	t.Run("the mirror is what NodeRestriction admits, with the static pod's status", func(t *testing.T) {
		if len(m.OwnerReferences) != 1 {
			t.Fatalf("owner references = %+v, want exactly the Node", m.OwnerReferences)
		}
		o := m.OwnerReferences[0]
		if o.Kind != "Node" || o.Name != env.NodeName || o.UID != node.UID || o.Controller == nil || !*o.Controller {
			t.Errorf("owner reference = %+v, want the controller reference to Node %s uid %s", o, env.NodeName, node.UID)
		}
		if m.Spec.NodeName != env.NodeName {
			t.Errorf("nodeName = %q", m.Spec.NodeName)
		}
		if m.Annotations[podtypes.ConfigHashAnnotationKey] != p.ConfigHash || m.Annotations[podtypes.ConfigSourceAnnotationKey] != "file" {
			t.Errorf("annotations = %v, want the static pod's", m.Annotations)
		}
		cs := m.Status.ContainerStatuses[0]
		local := findContainer(p, "main")
		if cs.ContainerID != local.ContainerID || cs.ImageID == "" || cs.Image == "" || cs.Started == nil || !*cs.Started {
			t.Errorf("container status = %+v, want the running container %s with its image", cs, local.ContainerID)
		}
		if m.Status.StartTime == nil || m.Status.QOSClass == "" || m.Status.HostIP == "" || len(m.Status.HostIPs) == 0 {
			t.Errorf("status misses its start time, QoS class or host IPs: %+v", m.Status)
		}
		for _, typ := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
			if c := podCondition(m, typ); c == nil || c.Status != corev1.ConditionTrue {
				t.Errorf("condition %s = %+v, want True", typ, c)
			}
		}
		lp := h.waitPod("web", "its mirror in sync", 5*time.Second, func(p localapi.Pod) bool {
			return p.Mirror != nil && p.Mirror.StatusSynced
		})
		if lp.Mirror.UID != string(m.UID) || !lp.Mirror.Synced || lp.Mirror.Problem != "" {
			t.Errorf("local API mirror = %+v, want synced with uid %s", lp.Mirror, m.UID)
		}
		if n := h.metricWith(t, "nodeagent_static_pod_mirror", `mirror_uid="`+string(m.UID)+`"`, `pod="`+m.Name+`"`, `state="synced"`); n != 1 {
			t.Errorf("/metrics: nodeagent_static_pod_mirror synced with mirror %s = %v, want 1", m.UID, n)
		}
	})

	t.Run("a mirror deleted by a user is created again, the pod untouched", func(t *testing.T) {
		before := h.runningIDs("web")
		if err := env.AdminClient.CoreV1().Pods(m.Namespace).Delete(context.Background(), m.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deleted := time.Now()
		again := h.waitMirror("web", "created again", 5*time.Second, func(n *corev1.Pod) bool {
			return n != nil && n.UID != m.UID && n.DeletionTimestamp == nil
		})
		t.Logf("mirror recreated %v after its deletion", time.Since(deleted))
		m = h.waitMirror("web", "Running again", 5*time.Second, mirrorRunning(p.ConfigHash))
		if m.UID != again.UID {
			t.Errorf("the mirror was replaced twice: %s then %s", again.UID, m.UID)
		}
		if after := h.runningIDs("web"); !maps.Equal(before, after) {
			t.Errorf("deleting the mirror touched the pod's containers: %v -> %v", before, after)
		}
	})

	t.Run("an edited manifest replaces the mirror with the new hash", func(t *testing.T) {
		edited := testPod("web", shContainer("main", "while true; do sleep 1; done"))
		edited.Spec.Containers[0].Env = []corev1.EnvVar{envVar("VERSION", "2")}
		h.writeManifest(edited)
		np := h.waitPod("web", "the new version running", 30*time.Second, func(lp localapi.Pod) bool {
			return lp.ConfigHash != p.ConfigHash && runningContainer("main")(lp)
		})
		nm := h.waitMirror("web", "replaced", 10*time.Second, mirrorRunning(np.ConfigHash))
		if nm.UID == m.UID {
			t.Errorf("the mirror kept its UID %s across a new version", nm.UID)
		}
		p, m = np, nm
	})

	t.Run("events of the pod are on its mirror", func(t *testing.T) {
		// By the UID kubectl describe looks them up by on a mirror pod:
		// its mirror annotation, the static pod's UID.
		uid := m.Annotations[podtypes.ConfigMirrorAnnotationKey]
		var got []string
		err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			evs, err := env.AdminClient.CoreV1().Events(m.Namespace).List(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", uid).String()})
			if err != nil {
				return false, nil
			}
			got = got[:0]
			for _, e := range evs.Items {
				got = append(got, e.Reason)
			}
			return strings.Contains(strings.Join(got, ","), "Started"), nil
		})
		if err != nil {
			t.Errorf("events of mirror %s: %v, want Started among them", m.UID, got)
		}
	})

	t.Run("kubectl get -o wide and describe show the mirror's live status and events", func(t *testing.T) {
		row := tableRow(t, m.Namespace, m.Name)
		for col, want := range map[string]string{"Ready": "1/1", "Status": "Running", "IP": m.Status.PodIP, "Node": env.NodeName} {
			if got := fmt.Sprint(row[col]); got != want || want == "" {
				t.Errorf("kubectl get -o wide: %s = %q, want %q (row %v)", col, got, want, row)
			}
		}
		d := &kubectldescribe.PodDescriber{Interface: env.AdminClient}
		out, err := d.Describe(m.Namespace, m.Name, kubectldescribe.DescriberSettings{ShowEvents: true, ChunkSize: 500})
		if err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, want := range []string{"Status: Running", "State: Running", "Ready: True", "Controlled By: Node/" + env.NodeName, "Normal Started", "Started container main"} {
			if !strings.Contains(flat, want) {
				t.Errorf("kubectl describe pod lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("readiness from a probe reaches the mirror both ways", func(t *testing.T) {
		c := shContainer("app", "while true; do sleep 1; done")
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/ready"}}},
			PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
		}
		h.writeManifest(testPod("ready", c))
		rp := h.waitPod("ready", "running", 30*time.Second, runningContainer("app"))
		readyIs := func(want corev1.ConditionStatus) func(*corev1.Pod) bool {
			return func(p *corev1.Pod) bool {
				if p == nil || p.Annotations[podtypes.ConfigMirrorAnnotationKey] != rp.ConfigHash {
					return false
				}
				c := podCondition(p, corev1.PodReady)
				return c != nil && c.Status == want
			}
		}
		h.waitMirror("ready", "Ready False without its file", 10*time.Second, readyIs(corev1.ConditionFalse))
		id := h.runningIDs("ready")["app"]
		for _, step := range []struct {
			cmd  []string
			want corev1.ConditionStatus
		}{{[]string{"touch", "/tmp/ready"}, corev1.ConditionTrue}, {[]string{"rm", "/tmp/ready"}, corev1.ConditionFalse}} {
			execIn(t, h, id, step.cmd...)
			began := time.Now()
			h.waitMirror("ready", "Ready "+string(step.want), 5*time.Second, readyIs(step.want))
			t.Logf("%s: mirror Ready %s in %v (a probe period is 1 s)", strings.Join(step.cmd, " "), step.want, time.Since(began).Round(time.Millisecond))
		}
		h.removeManifest("ready")
	})

	t.Run("a static pod NodeRestriction will not mirror runs, and says why", func(t *testing.T) {
		sp := testPod("secretive", shContainer("main", "while true; do sleep 1; done"))
		sp.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "token"}, Key: "t", Optional: ptr.To(true)}}}}
		h.writeManifest(sp)
		h.waitPod("secretive", "running", 30*time.Second, runningContainer("main"))
		lp := h.waitPod("secretive", "reported as not mirrorable", 10*time.Second, func(p localapi.Pod) bool {
			return p.Mirror != nil && strings.Contains(p.Mirror.Problem, "secretKeyRef")
		})
		if lp.Mirror.Synced || lp.Mirror.UID != "" {
			t.Errorf("local API mirror = %+v, want none", lp.Mirror)
		}
		ev := waitEvent(t, metav1.NamespaceDefault, "involvedObject.kind=Node,involvedObject.name="+env.NodeName+",reason=MirrorPodRefused")
		if !strings.Contains(ev.Message, h.podName("secretive")) || !strings.Contains(ev.Message, "secret") {
			t.Errorf("Node event %q does not name the pod and the reason", ev.Message)
		}
		if _, err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Get(context.Background(), h.podName("secretive"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a mirror exists for a pod that references a secret: %v", err)
		}
		h.removeManifest("secretive")
	})

	t.Run("refused manifests are events on the Node, naming the file", func(t *testing.T) {
		h.writeRaw("broken.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec: {containers: [{name: c}]}\n"))
		ev := waitEvent(t, metav1.NamespaceDefault, "involvedObject.kind=Node,involvedObject.name="+env.NodeName+",reason=FailedValidation")
		if !strings.Contains(ev.Message, "broken.yaml") || !strings.Contains(ev.Message, "image") {
			t.Errorf("Node event %q does not name the file and the field", ev.Message)
		}
		if err := os.Remove(filepath.Join(h.manifests, "broken.yaml")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a removed manifest deletes the mirror", func(t *testing.T) {
		h.removeManifest("web")
		h.waitMirror("web", "deleted", 10*time.Second, mirrorGone)
	})

	t.Run("an orphan left while the agent was stopped is deleted", func(t *testing.T) {
		h.writeManifest(testPod("orphan", shContainer("main", "while true; do sleep 1; done")))
		op := h.waitPod("orphan", "running", 30*time.Second, runningContainer("main"))
		om := h.waitMirror("orphan", "Running", 10*time.Second, mirrorRunning(op.ConfigHash))
		h.stop()
		h.removeManifest("orphan")
		h.start()
		h.waitMirror("orphan", "deleted after the restart", 20*time.Second, mirrorGone)
		t.Logf("orphan %s deleted", om.UID)
	})
	h.stop()
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// waitEvent waits for an event matching the field selector.
func waitEvent(t *testing.T, namespace, selector string) corev1.Event {
	t.Helper()
	var found corev1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := env.AdminClient.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil || len(evs.Items) == 0 {
			return false, nil
		}
		found = evs.Items[0]
		return true, nil
	})
	if err != nil {
		t.Fatalf("no event %s in %s: %v", selector, namespace, err)
	}
	return found
}

// tableRow is the pod's row as kubectl get -o wide prints it: the
// apiserver's table, by column name.
func tableRow(t *testing.T, namespace, name string) map[string]any {
	t.Helper()
	raw, err := env.AdminClient.CoreV1().RESTClient().Get().Namespace(namespace).Resource("pods").Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(context.Background()).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("table has %d rows", len(table.Rows))
	}
	row := map[string]any{}
	for i, c := range table.ColumnDefinitions {
		row[c.Name] = table.Rows[0].Cells[i]
	}
	return row
}
