package integration

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The kubelet's split of its API between nodes/log (/logs/, the node's
// system logs) and nodes/proxy (containers' logs, exec, attach,
// port-forward), proven on the node API itself: the apiserver's own
// nodes/proxy would otherwise stand in front of it.

// nodeLogOnly asks, as a service account whose only role grants nodes/log,
// the node API at nodeAPI and, through kubectl, the apiserver.
func nodeLogOnly(t *testing.T, nodeAPI, pod string) {
	ctx := context.Background()
	const name = "nodeagent-node-log-only"
	roles, bindings := env.AdminClient.RbacV1().ClusterRoles(), env.AdminClient.RbacV1().ClusterRoleBindings()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/log"}, Verbs: []string{"get"}}}}
	if _, err := roles.Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = roles.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: metav1.NamespaceDefault, Name: name}}}
	if _, err := bindings.Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bindings.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	token := serviceAccountToken(t, name)

	t.Run("nodes/log reads the system logs", func(t *testing.T) {
		var listing string
		eventuallyTrue(t, "/logs/ as the service account", 20*time.Second, func() (bool, string) {
			code, body := directGet(t, nodeAPI+"/logs/", token)
			listing = body
			return code == http.StatusOK, body
		})
		// The listing's files: each served, or refused (403) as a link
		// out of the directory; at least one served.
		served := 0
		for _, m := range regexp.MustCompile(`href="([^"/?]+)"`).FindAllStringSubmatch(listing, -1) {
			switch code, body := directGet(t, nodeAPI+"/logs/"+m[1], token); code {
			case http.StatusOK:
				served++
			case http.StatusForbidden:
			default:
				t.Errorf("/logs/%s: %d %q", m[1], code, body)
			}
		}
		if served == 0 {
			t.Errorf("no file of the listing served:\n%s", listing)
		}
	})

	t.Run("nodes/log is refused what needs nodes/proxy", func(t *testing.T) {
		for _, p := range []string{
			"/exec/default/" + pod + "/logger?command=true&output=1",
			"/attach/default/" + pod + "/reader?output=1",
			"/containerLogs/default/" + pod + "/logger",
			"/pods",
		} {
			if code, body := directGet(t, nodeAPI+p, token); code != http.StatusForbidden || !strings.Contains(body, "proxy") {
				t.Errorf("GET %s with nodes/log alone: %d %q, want 403 naming nodes/proxy", p, code, body)
			}
		}
		if code, body := directGet(t, nodeAPI+"/logs/", ""); code != http.StatusUnauthorized {
			t.Errorf("/logs/ without credentials: %d %q, want 401", code, body)
		}
	})

	t.Run("kubectl exec with nodes/log alone", func(t *testing.T) {
		cfg := rest.AnonymousClientConfig(env.AdminConfig)
		cfg.BearerToken = token
		k := newKubectl(t, writeKubeconfig(t, cfg, t.TempDir()))
		r := k.run("", "exec", pod, "-c", "logger", "--", "true")
		if r.code == 0 || !strings.Contains(r.stderr, "forbidden") {
			t.Errorf("exec: %s; want the apiserver's refusal", r)
		}
	})
}
