package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Connected mode, the node API's other endpoints: each answers a caller
// the apiserver allows the path's nodes subresource (a service account's
// token, reviewed and authorized by the real apiserver), and refuses one
// it does not.

func TestBinaryNodeAPIEndpoints(t *testing.T) {
	addr := freeAddress(t)
	_, portStr, _ := net.SplitHostPort(addr)
	h := newConnectedAgent(t, "--node-ip=127.0.0.1", "--address=127.0.0.1", "--port="+portStr, "--client-ca-file="+env.CAFile)
	waitNode(t, "Ready", 30*time.Second, isReady)

	// A readiness probe feeds /metrics/probes; an emptyDir of 1 MiB and a
	// log line, the summary's filesystems.
	app := shContainer("app", "dd if=/dev/zero of=/scratch/f bs=1024 count=1024 2>/dev/null; echo started; exec sleep 3600")
	app.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	app.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1}
	pod := h.apiPodSpec("endpoints", app)
	pod.Spec.HostNetwork = false // a network namespace of its own, whose counters the summary has
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "ready", 60*time.Second, func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return p.UID == created.UID && c.Status == corev1.ConditionTrue
			}
		}
		return false
	})

	nodeAPI := "https://127.0.0.1:" + portStr
	nobody := serviceAccountToken(t, "endpoints-nobody")
	allowed := func(sub string) string { return nodeSubresourceToken(t, "endpoints-"+sub, sub) }
	metricsToken, statsToken, configzToken, proxyToken, podsToken := allowed("metrics"), allowed("stats"), allowed("configz"), allowed("proxy"), allowed("pods")

	for _, c := range []struct {
		path, token, denied string
		check               func(body string) (bool, string)
	}{
		{"/metrics", metricsToken, "metrics", func(body string) (bool, string) {
			// The agent's, the kubelet's names among them, and client-go's
			// (the API clients' requests, the status manager's queue).
			for _, want := range []string{"\ngo_goroutines ", fmt.Sprintf("\nkubelet_node_name{node=%q} 1\n", h.node),
				"\nkubelet_pod_start_duration_seconds_count ", "\nkubelet_runtime_operations_total{operation_type=\"run_podsandbox\"} ",
				"\nrest_client_requests_total{", "\nworkqueue_adds_total{name=\"pod_status\"} "} {
				if !strings.Contains(body, want) {
					return false, fmt.Sprintf("the agent's metrics, with %q", want)
				}
			}
			return !strings.Contains(body, "prober_probe_total"), "the agent's metrics, not the prober's"
		}},
		{"/metrics/probes", metricsToken, "metrics", func(body string) (bool, string) {
			series := fmt.Sprintf(`prober_probe_total{container="app",namespace="default",pod=%q,pod_uid=%q,probe_type="Readiness",result="successful"} `, pod.Name, created.UID)
			return strings.Contains(body, "\n"+series) && strings.Contains(body, "\nprocess_start_time_seconds "), "the readiness probe's successes: " + series
		}},
		{"/configz", configzToken, "configz proxy", func(body string) (bool, string) {
			var got struct {
				KubeletConfig struct {
					Kind string `json:"kind"`
					Port int    `json:"port"`
				} `json:"kubeletconfig"`
			}
			err := json.Unmarshal([]byte(body), &got)
			return err == nil && got.KubeletConfig.Kind == "KubeletConfiguration" && fmt.Sprint(got.KubeletConfig.Port) == portStr,
				"a KubeletConfiguration with the port " + portStr
		}},
		{"/debug/pprof/goroutine?debug=1", proxyToken, "proxy", func(body string) (bool, string) {
			return strings.HasPrefix(body, "goroutine profile: total "), "the goroutine profile"
		}},
		{"/runningpods/", podsToken, "pods proxy", func(body string) (bool, string) {
			var list corev1.PodList
			if err := json.Unmarshal([]byte(body), &list); err != nil {
				return false, err.Error()
			}
			for _, p := range list.Items {
				if p.UID == created.UID && len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Name == "app" && p.Spec.Containers[0].Image != "" {
					return true, ""
				}
			}
			return false, "the pod, with its running container"
		}},
		{"/stats/summary", statsToken, "stats", func(body string) (bool, string) {
			var sum statsv1alpha1.Summary
			if err := json.Unmarshal([]byte(body), &sum); err != nil {
				return false, err.Error()
			}
			return summaryFilesystems(sum, string(created.UID))
		}},
	} {
		t.Run(c.path, func(t *testing.T) {
			if code, body := directGet(t, nodeAPI+c.path, nobody); code != http.StatusForbidden || !strings.Contains(body, "["+c.denied+"]") {
				t.Errorf("an unprivileged token: %d %q, want 403 naming nodes/[%s]", code, body, c.denied)
			}
			eventuallyTrue(t, c.path, 30*time.Second, func() (bool, string) {
				began := time.Now()
				code, body, err := tryGet(nodeAPI+c.path, c.token)
				if err != nil || code != http.StatusOK {
					return false, fmt.Sprintf("after %v: %d %q %v", time.Since(began), code, body, err)
				}
				ok, want := c.check(body)
				return ok, "want " + want + " in:\n" + body
			})
		})
	}
}

// summaryFilesystems checks the summary's filesystem figures (the node's
// and the image filesystem's, and the pod's containers' and emptyDir's)
// and the node's and the pod's network counters.
func summaryFilesystems(sum statsv1alpha1.Summary, uid string) (bool, string) {
	set := func(fs *statsv1alpha1.FsStats) bool {
		return fs != nil && fs.UsedBytes != nil && fs.CapacityBytes != nil && *fs.CapacityBytes > 0
	}
	if !set(sum.Node.Fs) || sum.Node.Runtime == nil || !set(sum.Node.Runtime.ImageFs) || *sum.Node.Runtime.ImageFs.UsedBytes == 0 {
		return false, "the node's filesystem and the image filesystem, with the images' use"
	}
	if n := sum.Node.Network; n == nil || n.Name == "" || n.RxBytes == nil || len(n.Interfaces) == 0 {
		return false, "the node's network interfaces"
	}
	for _, p := range sum.Pods {
		if p.PodRef.UID != uid {
			continue
		}
		if len(p.Containers) != 1 || !set(p.Containers[0].Rootfs) || !set(p.Containers[0].Logs) || *p.Containers[0].Logs.UsedBytes == 0 {
			return false, "the container's rootfs and logs (its log holds a line)"
		}
		if len(p.VolumeStats) != 1 || p.VolumeStats[0].Name != "scratch" || *p.VolumeStats[0].UsedBytes < 1<<20 {
			return false, "the emptyDir scratch, of at least 1 MiB"
		}
		if !set(p.EphemeralStorage) || *p.EphemeralStorage.UsedBytes < 1<<20+*p.Containers[0].Logs.UsedBytes {
			return false, "the pod's ephemeral storage: the emptyDir and the logs at least"
		}
		if p.Network == nil || p.Network.Name != "eth0" || p.Network.RxBytes == nil || len(p.Network.Interfaces) == 0 {
			return false, "the pod's network counters, eth0's"
		}
		return true, ""
	}
	return false, "the pod " + uid
}

// tryGet is directGet, its failure an error rather than the test's end.
func tryGet(rawURL, token string) (int, string, error) {
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec G402 -- the agent's self-signed serving certificate
	defer c.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body), err
}

// nodeSubresourceToken makes a service account that may get the nodes
// subresource sub, and nothing else, and returns a token of it.
func nodeSubresourceToken(t *testing.T, name, sub string) string {
	t.Helper()
	ctx := context.Background()
	rbac := env.AdminClient.RbacV1()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/" + sub}, Verbs: []string{"get"}}},
	}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ClusterRole %s: %v", name, err)
	}
	t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: metav1.NamespaceDefault}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ClusterRoleBinding %s: %v", name, err)
	}
	t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return serviceAccountToken(t, name)
}
