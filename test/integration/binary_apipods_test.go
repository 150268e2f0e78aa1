package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// Connected mode, part 3: pods bound to the node through the apiserver,
// run with their ConfigMaps, Secrets, tokens and downward API, read with
// the node's own identity under the Node authorizer.

// apiPodSpec is a pod bound to the node, named as the harness names the
// node's pods (so that its helpers find it in the runtime), host-network
// as every pod of these tests.
func (h *agentHarness) apiPodSpec(name string, containers ...corev1.Container) *corev1.Pod {
	pod := testPod(h.podName(name), containers...)
	pod.TypeMeta = metav1.TypeMeta{}
	pod.Spec.NodeName = h.node
	return pod
}

// createAPIPod creates the pod as the admin, deleted (at once) when the
// test ends.
func (h *agentHarness) createAPIPod(pod *corev1.Pod) *corev1.Pod {
	h.t.Helper()
	created, err := env.AdminClient.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	h.t.Cleanup(func() {
		err := env.AdminClient.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name,
			metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &created.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			h.t.Errorf("deleting pod %s: %v", pod.Name, err)
		}
	})
	return created
}

// apiPodRunning: the pod's status in the apiserver says every container
// runs and is ready.
func apiPodRunning(uid types.UID) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		if p == nil || p.UID != uid || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
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

// eventually polls ok every 50 ms until it holds or timeout passes.
func eventuallyTrue(t *testing.T, what string, timeout time.Duration, ok func() (bool, string)) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		done, got := ok()
		last = got
		return done, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %v; last: %s", what, timeout, last)
	}
}

func createConfigMap(t testing.TB, name string, data map[string]string, immutable bool) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
	if immutable {
		cm.Immutable = ptr.To(true)
	}
	cm, err := env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault).Create(context.Background(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return cm
}

func createSecret(t *testing.T, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	s, err := env.AdminClient.CoreV1().Secrets(metav1.NamespaceDefault).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.AdminClient.CoreV1().Secrets(metav1.NamespaceDefault).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return s
}

func TestBinaryAPIPods(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	ctx := context.Background()
	cms := env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault)
	secrets := env.AdminClient.CoreV1().Secrets(metav1.NamespaceDefault)

	createConfigMap(t, "app-config", map[string]string{"greeting": "hello", "color": "blue"}, false)
	createSecret(t, "app-secret", map[string]string{"password": "s3cret"})

	main := shContainer("main", sleepForever)
	main.Env = []corev1.EnvVar{
		{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "greeting"}}},
		{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-secret"}, Key: "password"}}},
		{Name: "ABSENT", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "no-such-config"}, Key: "x", Optional: ptr.To(true)}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_UID", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}}},
		{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "SA", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.serviceAccountName"}}},
		{Name: "MEM_LIMIT_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
			Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
	}
	main.EnvFrom = []corev1.EnvFromSource{
		{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
		{Prefix: "SEC_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-secret"}}},
	}
	main.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	main.VolumeMounts = []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/config"},
		{Name: "secret", MountPath: "/etc/secret"},
		{Name: "podinfo", MountPath: "/etc/podinfo"},
		{Name: "projected", MountPath: "/etc/projected"},
		{Name: "config", MountPath: "/etc/color-fixed", SubPath: "color"},
	}
	pod := h.apiPodSpec("data", main)
	pod.Labels = map[string]string{"app": "data", "tier": "one"}
	pod.Annotations = map[string]string{"note": "first"}
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](4321)}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "app-secret", DefaultMode: ptr.To[int32](0o400),
			Items: []corev1.KeyToPath{{Key: "password", Path: "db/password"}}}}},
		{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "note", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['note']"}},
		}}}},
		{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"},
				Items: []corev1.KeyToPath{{Key: "color", Path: "color"}}}},
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app-secret"}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "vault-token", Audience: "vault", ExpirationSeconds: ptr.To[int64](3600)}},
		}}}},
	}
	created := h.createAPIPod(pod)
	name := "data"
	running := h.waitAPIPod(pod.Name, "Running in the apiserver", 60*time.Second, apiPodRunning(created.UID))

	t.Run("env from ConfigMaps, Secrets, the pod's fields and its resources", func(t *testing.T) {
		env := map[string]string{}
		for _, line := range strings.Split(h.exec(name, "main", "env"), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				env[k] = v
			}
		}
		want := map[string]string{
			"GREETING": "hello", "PASSWORD": "s3cret", "POD_NAME": pod.Name, "POD_UID": string(created.UID),
			"NODE": h.node, "HOST_IP": running.Status.HostIP, "SA": "default", "MEM_LIMIT_MI": "64",
			"CFG_greeting": "hello", "CFG_color": "blue", "SEC_password": "s3cret",
			"POD_IP": running.Status.PodIP,
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("env %s = %q, want %q", k, env[k], v)
			}
		}
		if _, ok := env["ABSENT"]; ok {
			t.Error("an optional variable of a missing ConfigMap is set")
		}
	})

	t.Run("volumes hold the objects' content", func(t *testing.T) {
		for path, want := range map[string]string{
			"/etc/config/greeting":    "hello",
			"/etc/config/color":       "blue",
			"/etc/secret/db/password": "s3cret",
			"/etc/podinfo/note":       "first",
			"/etc/projected/color":    "blue",
			"/etc/projected/password": "s3cret",
			"/etc/projected/name":     pod.Name,
			"/etc/color-fixed":        "blue",
			"/etc/podinfo/labels":     "app=\"data\"\ntier=\"one\"",
			"/var/run/secrets/kubernetes.io/serviceaccount/namespace": "default",
		} {
			if got := strings.TrimSpace(h.exec(name, "main", "cat", path)); got != want {
				t.Errorf("%s = %q, want %q", path, got, want)
			}
		}
		if mode := strings.TrimSpace(h.exec(name, "main", "stat", "-L", "-c", "%a", "/etc/secret/db/password")); mode != "440" {
			t.Errorf("secret file mode %s, want 440 (defaultMode 0400, and group-readable for the fsGroup)", mode)
		}
		for _, path := range []string{"/etc/config/greeting", "/etc/secret/db/password", "/etc/projected/vault-token"} {
			if gid := strings.TrimSpace(h.exec(name, "main", "stat", "-L", "-c", "%g", path)); gid != "4321" {
				t.Errorf("%s: group %s, want the pod's fsGroup 4321", path, gid)
			}
		}
		ca := h.exec(name, "main", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
		if !strings.Contains(ca, "BEGIN CERTIFICATE") {
			t.Errorf("ca.crt of the automounted token volume holds no certificate: %q", ca)
		}
	})

	t.Run("the tokens are the apiserver's, bound to the pod", func(t *testing.T) {
		for path, audience := range map[string]string{
			"/var/run/secrets/kubernetes.io/serviceaccount/token": "",
			"/etc/projected/vault-token":                          "vault",
		} {
			token := strings.TrimSpace(h.exec(name, "main", "cat", path))
			review := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}
			if audience != "" {
				review.Spec.Audiences = []string{audience}
			}
			got, err := env.AdminClient.AuthenticationV1().TokenReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := got.Status
			if !st.Authenticated || st.User.Username != "system:serviceaccount:default:default" {
				t.Errorf("%s: review = %+v, want authenticated as the default service account", path, st)
				continue
			}
			if uid := st.User.Extra["authentication.kubernetes.io/pod-uid"]; len(uid) != 1 || uid[0] != string(created.UID) {
				t.Errorf("%s: bound to pod uid %v, want %s", path, uid, created.UID)
			}
		}
	})

	t.Run("updated ConfigMaps, Secrets and labels reach the volumes; a subPath stays", func(t *testing.T) {
		cm, err := cms.Get(ctx, "app-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["color"] = "green"
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := secrets.Get(ctx, "app-secret", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Data["password"] = []byte("rotated")
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		p, err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels["tier"] = "two"
		if _, err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]string{
			"/etc/config/color":       "green",
			"/etc/projected/color":    "green",
			"/etc/secret/db/password": "rotated",
			"/etc/projected/password": "rotated",
			"/etc/podinfo/labels":     "app=\"data\"\ntier=\"two\"",
		} {
			eventuallyTrue(t, path+" updated", 10*time.Second, func() (bool, string) {
				got := strings.TrimSpace(h.exec(name, "main", "cat", path))
				return got == want, got
			})
		}
		if got := strings.TrimSpace(h.exec(name, "main", "cat", "/etc/color-fixed")); got != "blue" {
			t.Errorf("the subPath mount changed to %q: a subPath of a ConfigMap volume keeps what it was set up with", got)
		}
	})

	t.Run("a missing ConfigMap keeps a pod waiting, with a condition and an event; it starts once created", func(t *testing.T) {
		c := shContainer("main", sleepForever)
		c.VolumeMounts = []corev1.VolumeMount{{Name: "late", MountPath: "/etc/late"}}
		late := h.apiPodSpec("late", c)
		late.Spec.Volumes = []corev1.Volume{{Name: "late", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "late-config"}}}}}
		lp := h.createAPIPod(late)
		waiting := h.waitAPIPod(late.Name, "waiting for late-config", 30*time.Second, func(p *corev1.Pod) bool {
			if p == nil {
				return false
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "late-config") {
					return true
				}
			}
			return false
		})
		if waiting.Status.Phase != corev1.PodPending {
			t.Errorf("phase %s, want Pending", waiting.Status.Phase)
		}
		ev := waitEvent(t, metav1.NamespaceDefault, "involvedObject.uid="+string(lp.UID)+",reason=FailedMount")
		if !strings.Contains(ev.Message, "late-config") {
			t.Errorf("event %q does not name the ConfigMap", ev.Message)
		}
		createConfigMap(t, "late-config", map[string]string{"k": "v"}, false)
		h.waitAPIPod(late.Name, "Running once late-config exists", 10*time.Second, apiPodRunning(lp.UID))
		if got := strings.TrimSpace(h.exec("late", "main", "cat", "/etc/late/k")); got != "v" {
			t.Errorf("late-config's key = %q", got)
		}
	})

	t.Run("a deleted ConfigMap leaves its last content in place", func(t *testing.T) {
		if err := cms.Delete(ctx, "app-config", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // what a wrong agent would need to empty the volume
		if got := strings.TrimSpace(h.exec(name, "main", "cat", "/etc/config/color")); got != "green" {
			t.Errorf("after the ConfigMap's deletion the file holds %q, want its last content", got)
		}
	})

	t.Run("graceful deletion ends with the pod gone from the apiserver", func(t *testing.T) {
		c := shContainer("main", sleepForever)
		// Its preStop hook runs first, and leaves a mark on the host.
		marks := filepath.Join(h.dir, "marks")
		if err := os.MkdirAll(marks, 0o755); err != nil {
			t.Fatal(err)
		}
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
			Command: []string{"sh", "-c", "echo stopping > /marks/prestop"}}}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "marks", MountPath: "/marks"}}
		g := h.apiPodSpec("graceful", c)
		g.Spec.Volumes = []corev1.Volume{{Name: "marks", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: marks}}}}
		gp := h.createAPIPod(g)
		h.waitAPIPod(g.Name, "Running", 30*time.Second, apiPodRunning(gp.UID))
		if err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Delete(ctx, g.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](20)}); err != nil {
			t.Fatal(err)
		}
		// The container exits on TERM at once: the agent, not the 20 s,
		// decides when the pod goes.
		h.waitAPIPod(g.Name, "deleted by the agent", 15*time.Second, func(p *corev1.Pod) bool { return p == nil })
		if left := h.containers("graceful", true); len(left) != 0 {
			t.Errorf("containers still running after the deletion: %d", len(left))
		}
		if sb := h.sandboxes("graceful"); len(sb) != 0 {
			t.Errorf("sandboxes left after the deletion: %d", len(sb))
		}
		if got, err := os.ReadFile(filepath.Join(marks, "prestop")); err != nil || strings.TrimSpace(string(got)) != "stopping" {
			t.Errorf("the preStop hook left %q, %v; want its mark", got, err)
		}
	})

	t.Run("a pod that does not fit is Failed with the kubelet's reason, and an event", func(t *testing.T) {
		big := shContainer("main", sleepForever)
		big.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
		for _, tc := range []struct {
			name, reason string
			pod          *corev1.Pod
		}{
			{"toobig", "OutOfcpu", h.apiPodSpec("toobig", big)},
			{"elsewhere", "NodeAffinity", func() *corev1.Pod {
				p := h.apiPodSpec("elsewhere", shContainer("main", sleepForever))
				p.Spec.NodeSelector = map[string]string{"example.com/pool": "gpu"}
				return p
			}()},
			// A feature the Node does not declare (the kubelet's
			// declared-features admission).
			{"restartall", "PodFeatureUnsupported", func() *corev1.Pod {
				c := shContainer("main", sleepForever)
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
				c.RestartPolicyRules = []corev1.ContainerRestartRule{{
					Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
					ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
				}}
				return h.apiPodSpec("restartall", c)
			}()},
		} {
			created := h.createAPIPod(tc.pod)
			failed := h.waitAPIPod(tc.pod.Name, "Failed", 30*time.Second, func(p *corev1.Pod) bool {
				return p != nil && p.Status.Phase == corev1.PodFailed
			})
			if failed.Status.Reason != tc.reason || failed.Status.Message == "" {
				t.Errorf("%s: status reason %q message %q, want %s with a message", tc.name, failed.Status.Reason, failed.Status.Message, tc.reason)
			}
			waitEvent(t, metav1.NamespaceDefault, "involvedObject.uid="+string(created.UID)+",reason="+tc.reason)
			if n := len(h.containers(tc.name, false)); n != 0 {
				t.Errorf("%s: %d containers of a refused pod", tc.name, n)
			}
			// Its deletion ends as any other's: the agent deletes it.
			if err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Delete(ctx, tc.pod.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			h.waitAPIPod(tc.pod.Name, "deleted by the agent", 15*time.Second, func(p *corev1.Pod) bool { return p == nil })
		}
	})

	t.Run("a force-deleted pod stops at once", func(t *testing.T) {
		c := shContainer("main", "trap '' TERM; while true; do sleep 0.2; done") // ignores TERM
		f := h.apiPodSpec("forced", c)
		f.Spec.TerminationGracePeriodSeconds = ptr.To[int64](60)
		fp := h.createAPIPod(f)
		h.waitAPIPod(f.Name, "Running", 30*time.Second, apiPodRunning(fp.UID))
		if err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Delete(ctx, f.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		eventuallyTrue(t, "the force-deleted pod's containers stopped, without its 60 s grace period", 15*time.Second, func() (bool, string) {
			n := len(h.containers("forced", true))
			return n == 0, fmt.Sprintf("%d running containers", n)
		})
	})
}

// waitAPIPod polls the pod default/name (as the admin) until ok, or fails
// after timeout; ok sees nil while the pod does not exist.
func (h *agentHarness) waitAPIPod(name, what string, timeout time.Duration, ok func(*corev1.Pod) bool) *corev1.Pod {
	h.t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			last = nil
			return ok(nil), nil
		}
		if err != nil {
			return false, nil
		}
		last = p
		return ok(p), nil
	})
	if err != nil {
		h.t.Fatalf("waiting for pod %s: %s: %v\nlast seen: %s\n%s", name, what, err, describeAPIPod(last), h.log(40))
	}
	return last
}

// The other change detection strategies: no watch, and updates reach the
// volumes at the pods' periodic sync (Get: every read goes to the
// apiserver; Cache: for the TTL the Node's annotation sets, here 0).
func TestBinaryAPIPodsChangeDetection(t *testing.T) {
	for _, strategy := range []string{"Get", "Cache"} {
		t.Run(strategy, func(t *testing.T) {
			h := newConnectedAgent(t, "--config-map-and-secret-change-detection-strategy", strategy, "--sync-frequency", "2s")
			waitNode(t, "Ready", 30*time.Second, isReady)
			ctx := context.Background()
			if strategy == "Cache" {
				patch := []byte(`{"metadata":{"annotations":{"node.alpha.kubernetes.io/ttl":"0"}}}`)
				if _, err := env.AdminClient.CoreV1().Nodes().Patch(ctx, h.node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			name := "strategy-" + strings.ToLower(strategy)
			createConfigMap(t, name, map[string]string{"v": "one"}, false)
			c := shContainer("main", sleepForever)
			c.VolumeMounts = []corev1.VolumeMount{{Name: "cm", MountPath: "/etc/cm"}}
			pod := h.apiPodSpec("reader", c)
			pod.Spec.Volumes = []corev1.Volume{{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}}
			created := h.createAPIPod(pod)
			h.waitAPIPod(pod.Name, "Running", 60*time.Second, apiPodRunning(created.UID))
			if got := strings.TrimSpace(h.exec("reader", "main", "cat", "/etc/cm/v")); got != "one" {
				t.Fatalf("/etc/cm/v = %q", got)
			}
			if n := h.metricWith(t, "nodeagent_objectcache_active_watches"); n != 0 {
				t.Errorf("%v watches open with the %s strategy", n, strategy)
			}
			cm, err := env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["v"] = "two"
			if _, err := env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventuallyTrue(t, "the update at a periodic sync", 15*time.Second, func() (bool, string) {
				got := strings.TrimSpace(h.exec("reader", "main", "cat", "/etc/cm/v"))
				return got == "two", got
			})
		})
	}
}
