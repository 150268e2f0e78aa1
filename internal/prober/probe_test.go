package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func serverPort(t *testing.T, s *httptest.Server) int {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

func TestHTTPProbe(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError) // never reached: another host
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	var gotHeader, gotHost, gotAgent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			gotHeader, gotHost, gotAgent = r.Header.Get("X-Probe"), r.Host, r.UserAgent()
			_, _ = w.Write([]byte("fine"))
		case "/bad":
			http.Error(w, "broken: secret=hunter2", http.StatusServiceUnavailable)
		case "/same":
			http.Redirect(w, r, "/bad", http.StatusFound)
		case "/away":
			http.Redirect(w, r, otherURL+"/x", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/hang":
			time.Sleep(1500 * time.Millisecond)
		}
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	tgt := target{ports: []corev1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}}

	for _, tc := range []struct {
		path    string
		port    intstr.IntOrString
		want    Result
		message string
	}{
		{"/ok", intstr.FromString("web"), Success, "fine"},
		{"/ok", intstr.FromInt32(int32(port)), Success, "fine"},
		{"/bad", intstr.FromInt32(int32(port)), Failure, "statuscode: 503"},
		{"/same", intstr.FromInt32(int32(port)), Failure, "statuscode: 503"}, // followed to /bad
		{"/away", intstr.FromInt32(int32(port)), successWithWarning, "Probe terminated redirects, Response body: <a href="},
		{"/loop", intstr.FromInt32(int32(port)), Failure, "stopped after 10 redirects"},
		{"/hang", intstr.FromInt32(int32(port)), Failure, "no answer within 1s"},
		{"/ok", intstr.FromString("nope"), Failure, `no port named "nope"`},
	} {
		a := &corev1.HTTPGetAction{Path: tc.path, Port: tc.port, Scheme: corev1.URISchemeHTTP,
			HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "yes"}, {Name: "Host", Value: "example.test"}}}
		r, msg := probeHTTP(context.Background(), a, tgt, "127.0.0.1", time.Second)
		if r != tc.want || !strings.Contains(msg, tc.message) {
			t.Errorf("GET %s port %v = %v %q, want %v containing %q", tc.path, tc.port, r, msg, tc.want, tc.message)
		}
		if r == Failure && strings.Contains(msg, "hunter2") {
			t.Errorf("GET %s: the failure's message %q carries the response body", tc.path, msg)
		}
	}
	if gotHeader != "yes" || gotHost != "example.test" || !strings.HasPrefix(gotAgent, "kube-probe/") {
		t.Errorf("the server saw X-Probe %q, Host %q, User-Agent %q", gotHeader, gotHost, gotAgent)
	}
}

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if r, msg := probeTCP(context.Background(), intstr.FromInt32(int32(port)), target{}, "127.0.0.1", time.Second); r != Success {
		t.Errorf("open port: %v %q", r, msg)
	}
	_ = l.Close()
	if r, _ := probeTCP(context.Background(), intstr.FromInt32(int32(port)), target{}, "127.0.0.1", time.Second); r != Failure {
		t.Errorf("closed port: %v, want failure", r)
	}
}

func TestGRPCProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	port := int32(l.Addr().(*net.TCPAddr).Port)

	for _, tc := range []struct {
		service string
		want    Result
		message string
	}{
		{"", Success, ""},
		{"db", Failure, "NOT_SERVING"},
		{"unknown", Failure, "NotFound"},
	} {
		r, msg := probeGRPC(context.Background(), &corev1.GRPCAction{Port: port, Service: &tc.service}, "127.0.0.1", time.Second)
		if r != tc.want || !strings.Contains(msg, tc.message) {
			t.Errorf("service %q = %v %q, want %v containing %q", tc.service, r, msg, tc.want, tc.message)
		}
	}
}
