package nodeapi

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// What a request asks of the node, as the kubelet maps it for a
// SubjectAccessReview: the verb from the method, the `nodes` resource
// named for this node, and a subresource from the path. Some paths have a
// fine-grained subresource of their own and fall back to `proxy`, which
// allows everything; the request is allowed if any one is. Paths with no
// subresource of their own (exec, attach, portForward, run,
// containerLogs) need `proxy`.

// fineGrained are the paths checked against their own subresource first,
// then against proxy.
var fineGrained = []struct{ path, subresource string }{
	{"/pods", "pods"},
	{"/runningpods", "pods"},
	{"/healthz", "healthz"},
	{"/configz", "configz"},
}

// dedicated are the paths whose subresource is the only one checked.
var dedicated = []struct{ path, subresource string }{
	{"/stats", "stats"},
	{"/metrics", "metrics"},
	{"/logs", "log"},
	{"/checkpoint", "checkpoint"},
	{"/statusz", "statusz"},
	{"/flagz", "configz"},
}

// requestAttributes returns the attributes to authorize, in order.
func requestAttributes(nodeName string, u user.Info, r *http.Request) []authorizer.AttributesRecord {
	var subresources []string
	for _, p := range fineGrained {
		if underPath(r.URL.Path, p.path) {
			subresources = append(subresources, p.subresource)
			break
		}
	}
	last := "proxy"
	for _, p := range dedicated {
		if underPath(r.URL.Path, p.path) {
			last = p.subresource
			break
		}
	}
	subresources = append(subresources, last)

	out := make([]authorizer.AttributesRecord, 0, len(subresources))
	for _, sub := range subresources {
		out = append(out, authorizer.AttributesRecord{
			User: u, Verb: verb(r.Method),
			APIVersion: "v1", Resource: "nodes", Subresource: sub, Name: nodeName,
			ResourceRequest: true, Path: r.URL.Path,
		})
	}
	return out
}

// underPath: p is dir or below it.
func underPath(p, dir string) bool {
	rest, ok := strings.CutPrefix(p, dir)
	return ok && (rest == "" || rest[0] == '/')
}

// verb maps an HTTP method to an API verb as the kubelet does; other
// methods get none, which no role grants.
func verb(method string) string {
	switch method {
	case http.MethodGet:
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}
