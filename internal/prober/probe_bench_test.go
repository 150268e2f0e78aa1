package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BenchmarkProbeHTTP and BenchmarkProbeTCP are one probe each against a
// server in this process on loopback (its share of the CPU is counted
// too): the agent's cost per probe, the kernel's connect and close in it.
//
//	go test -run '^$' -bench 'Probe(HTTP|TCP)' -benchmem ./internal/prober/
func BenchmarkProbeHTTP(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	port := benchPort(b, srv.Listener.Addr())
	a := &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r, msg := probeHTTP(ctx, a, target{}, "127.0.0.1", time.Second); r != Success {
			b.Fatal(msg)
		}
	}
}

func BenchmarkProbeTCP(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := benchPort(b, l.Addr())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r, msg := probeTCP(ctx, intstr.FromInt32(port), target{}, "127.0.0.1", time.Second); r != Success {
			b.Fatal(msg)
		}
	}
}

func benchPort(b *testing.B, a net.Addr) int32 {
	_, p, err := net.SplitHostPort(a.String())
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		b.Fatal(err)
	}
	return int32(n)
}
