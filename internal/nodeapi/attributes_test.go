package nodeapi

import (
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/authentication/user"
)

func TestRequestAttributesMapPathsAsTheKubelet(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		verb         string
		subresources []string
	}{
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}},
		{"GET", "/logs/syslog", "get", []string{"log"}},
		{"GET", "/containerLogs/default/web/app", "get", []string{"proxy"}},
		{"POST", "/exec/default/web/app", "create", []string{"proxy"}},
		{"GET", "/exec/default/web/app", "get", []string{"proxy"}},
		{"POST", "/portForward/default/web", "create", []string{"proxy"}},
		{"POST", "/run/default/web/app", "create", []string{"proxy"}},
		// A prefix is not a path: /podsx and /statsx are not /pods and /stats.
		{"GET", "/podsx", "get", []string{"proxy"}},
		{"GET", "/statsx", "get", []string{"proxy"}},
		{"HEAD", "/pods", "", []string{"pods", "proxy"}},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		attrs := requestAttributes("node-1", &user.DefaultInfo{Name: "alice"}, r)
		var subs []string
		for _, a := range attrs {
			subs = append(subs, a.Subresource)
			if a.Verb != tc.verb || a.Resource != "nodes" || a.Name != "node-1" || a.APIVersion != "v1" || !a.ResourceRequest || a.Path != tc.path || a.User.GetName() != "alice" {
				t.Errorf("%s %s: attributes %+v", tc.method, tc.path, a)
			}
		}
		if diff := cmp.Diff(tc.subresources, subs); diff != "" {
			t.Errorf("%s %s: subresources (-want +got):\n%s", tc.method, tc.path, diff)
		}
	}
}
