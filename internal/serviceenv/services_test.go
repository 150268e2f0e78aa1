package serviceenv

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func service(namespace, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func port(name string, p int32, proto corev1.Protocol) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: p, Protocol: proto}
}

var kubernetesVars = map[string]string{
	"KUBERNETES_SERVICE_HOST":       "10.0.0.1",
	"KUBERNETES_SERVICE_PORT":       "443",
	"KUBERNETES_SERVICE_PORT_HTTPS": "443",
	"KUBERNETES_PORT":               "tcp://10.0.0.1:443",
	"KUBERNETES_PORT_443_TCP":       "tcp://10.0.0.1:443",
	"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
	"KUBERNETES_PORT_443_TCP_PORT":  "443",
	"KUBERNETES_PORT_443_TCP_ADDR":  "10.0.0.1",
}

func TestAddVars(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
		want map[string]string
	}{
		{name: "the kubernetes service", svc: service("default", "kubernetes", "10.0.0.1", port("https", 443, corev1.ProtocolTCP)),
			want: kubernetesVars},
		{name: "dashes, several ports, default protocol, UDP, unnamed port",
			svc: service("ns", "my-svc", "10.0.0.7", port("http-alt", 8080, ""), port("dns", 53, corev1.ProtocolUDP), port("", 9000, corev1.ProtocolSCTP)),
			want: map[string]string{
				"MY_SVC_SERVICE_HOST":          "10.0.0.7",
				"MY_SVC_SERVICE_PORT":          "8080",
				"MY_SVC_SERVICE_PORT_HTTP_ALT": "8080",
				"MY_SVC_SERVICE_PORT_DNS":      "53",
				"MY_SVC_PORT":                  "tcp://10.0.0.7:8080",
				"MY_SVC_PORT_8080_TCP":         "tcp://10.0.0.7:8080",
				"MY_SVC_PORT_8080_TCP_PROTO":   "tcp",
				"MY_SVC_PORT_8080_TCP_PORT":    "8080",
				"MY_SVC_PORT_8080_TCP_ADDR":    "10.0.0.7",
				"MY_SVC_PORT_53_UDP":           "udp://10.0.0.7:53",
				"MY_SVC_PORT_53_UDP_PROTO":     "udp",
				"MY_SVC_PORT_53_UDP_PORT":      "53",
				"MY_SVC_PORT_53_UDP_ADDR":      "10.0.0.7",
				"MY_SVC_PORT_9000_SCTP":        "sctp://10.0.0.7:9000",
				"MY_SVC_PORT_9000_SCTP_PROTO":  "sctp",
				"MY_SVC_PORT_9000_SCTP_PORT":   "9000",
				"MY_SVC_PORT_9000_SCTP_ADDR":   "10.0.0.7",
			}},
		{name: "IPv6", svc: service("ns", "v6", "fd00::10", port("", 80, corev1.ProtocolTCP)),
			want: map[string]string{
				"V6_SERVICE_HOST": "fd00::10", "V6_SERVICE_PORT": "80", "V6_PORT": "tcp://[fd00::10]:80",
				"V6_PORT_80_TCP": "tcp://[fd00::10]:80", "V6_PORT_80_TCP_PROTO": "tcp", "V6_PORT_80_TCP_PORT": "80", "V6_PORT_80_TCP_ADDR": "fd00::10",
			}},
		{name: "headless", svc: service("ns", "h", corev1.ClusterIPNone, port("", 80, "")), want: map[string]string{}},
		{name: "no cluster IP (ExternalName)", svc: service("ns", "ext", "", port("", 80, "")), want: map[string]string{}},
		{name: "no port", svc: service("ns", "noport", "10.0.0.9"), want: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			addVars(got, tc.svc)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("vars (-want +got):\n%s", diff)
			}
		})
	}
}

func lister(t *testing.T, services ...*corev1.Service) corelisters.ServiceLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range services {
		if err := idx.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewServiceLister(idx)
}

// Which Services a pod sees: default/kubernetes always; the Services of
// its own namespace with links; never those of another namespace.
func TestVars(t *testing.T) {
	l := lister(t,
		service("default", "kubernetes", "10.0.0.1", port("https", 443, corev1.ProtocolTCP)),
		service("default", "other", "10.0.0.2", port("", 80, "")),
		service("app", "foo", "10.0.0.3", port("", 80, "")),
		service("app", "headless", corev1.ClusterIPNone, port("", 80, "")),
		service("elsewhere", "bar", "10.0.0.4", port("", 80, "")),
		service("shadow", "kubernetes", "10.0.0.5", port("", 8443, "")),
	)
	fooVars := map[string]string{"FOO_SERVICE_HOST": "10.0.0.3", "FOO_SERVICE_PORT": "80", "FOO_PORT": "tcp://10.0.0.3:80",
		"FOO_PORT_80_TCP": "tcp://10.0.0.3:80", "FOO_PORT_80_TCP_PROTO": "tcp", "FOO_PORT_80_TCP_PORT": "80", "FOO_PORT_80_TCP_ADDR": "10.0.0.3"}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		namespace string
		links     bool
		want      map[string]string
	}{
		{name: "links", namespace: "app", links: true, want: merge(kubernetesVars, fooVars)},
		{name: "no links: kubernetes only", namespace: "app", links: false, want: kubernetesVars},
		{name: "default namespace without links", namespace: "default", links: false, want: kubernetesVars},
		{name: "a namespace without Services", namespace: "empty", links: true, want: kubernetesVars},
		{name: "a kubernetes Service of the pod's namespace wins", namespace: "shadow", links: true, want: map[string]string{
			"KUBERNETES_SERVICE_HOST": "10.0.0.5", "KUBERNETES_SERVICE_PORT": "8443", "KUBERNETES_PORT": "tcp://10.0.0.5:8443",
			"KUBERNETES_PORT_8443_TCP": "tcp://10.0.0.5:8443", "KUBERNETES_PORT_8443_TCP_PROTO": "tcp",
			"KUBERNETES_PORT_8443_TCP_PORT": "8443", "KUBERNETES_PORT_8443_TCP_ADDR": "10.0.0.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := vars(l, tc.namespace, tc.links)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("vars (-want +got):\n%s", diff)
			}
		})
	}
	if got, _ := vars(lister(t), "app", true); len(got) != 0 {
		t.Errorf("without a kubernetes Service: %v, want none", got)
	}
}

func pod(source podtypes.Source, links *bool) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "p",
			Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: string(source)}},
		Spec: corev1.PodSpec{EnableServiceLinks: links},
	}
}

// Before the first read, a static pod gets nothing at once and an API pod
// waits, bounded; once read, both get the Services, and a deleted Service
// is gone from the next answer.
func TestServiceEnv(t *testing.T) {
	s := New(Options{SyncWait: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if got, err := s.ServiceEnv(ctx, pod(podtypes.FileSource, nil)); err != nil || len(got) != 0 {
		t.Fatalf("static pod before Run: %v, %v; want nothing at once", got, err)
	}
	if _, err := s.ServiceEnv(ctx, pod(podtypes.APIServerSource, nil)); !errors.Is(err, ErrNotSynced) {
		t.Fatalf("API pod before Run: err = %v, want ErrNotSynced", err)
	}

	client := fake.NewClientset(
		service("default", "kubernetes", "10.0.0.1", port("https", 443, corev1.ProtocolTCP)),
		service("app", "foo", "10.0.0.3", port("", 80, "")),
	)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, client) }()
	s.opts.SyncWait = 10 * time.Second
	no := false
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{"API pod", pod(podtypes.APIServerSource, nil), []string{"KUBERNETES_SERVICE_HOST", "FOO_SERVICE_HOST"}},
		{"static pod", pod(podtypes.FileSource, nil), []string{"KUBERNETES_SERVICE_HOST", "FOO_SERVICE_HOST"}},
		{"enableServiceLinks false", pod(podtypes.APIServerSource, &no), []string{"KUBERNETES_SERVICE_HOST"}},
	} {
		got, err := s.ServiceEnv(ctx, tc.pod)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, k := range tc.want {
			if got[k] == "" {
				t.Errorf("%s: %s missing from %v", tc.name, k, got)
			}
		}
		if _, ok := got["FOO_SERVICE_HOST"]; ok && len(tc.want) == 1 {
			t.Errorf("%s: FOO_SERVICE_HOST set without links", tc.name)
		}
	}

	if err := client.CoreV1().Services("app").Delete(ctx, "foo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := s.ServiceEnv(ctx, pod(podtypes.APIServerSource, nil))
		if _, ok := got["FOO_SERVICE_HOST"]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("FOO_SERVICE_HOST still there 10 s after the Service was deleted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSlim(t *testing.T) {
	in := service("ns", "s", "10.0.0.3", corev1.ServicePort{Name: "p", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 30080})
	in.Labels = map[string]string{"a": "b"}
	in.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}}
	out, err := slim(in)
	if err != nil {
		t.Fatal(err)
	}
	want := service("ns", "s", "10.0.0.3", corev1.ServicePort{Name: "p", Port: 80, Protocol: corev1.ProtocolTCP})
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("slim (-want +got):\n%s", diff)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/s"}
	if got, _ := slim(tomb); got != tomb {
		t.Errorf("slim(tombstone) = %v, want it as it was", got)
	}
}
