package runtime

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// execServer answers ExecSync at once, as a runtime whose command costs
// nothing: what is left is the CRI call itself.
type execServer struct {
	versionServer
}

func (execServer) ExecSync(_ context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	return &runtimeapi.ExecSyncResponse{Stdout: []byte("ok\n")}, nil
}

// BenchmarkExecSync is one exec probe's CRI call, client and server in
// this process over a unix socket: the ceiling of the agent's share of an
// exec probe's CPU (the server's share is counted too).
//
//	go test -run '^$' -bench ExecSync -benchmem ./internal/runtime/
func BenchmarkExecSync(b *testing.B) {
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		b.Fatal(err)
	}
	s := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(s, execServer{})
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(l) }()
	defer func() { s.Stop(); <-done }()

	ctx := context.Background()
	r, err := New(ctx, Options{Endpoint: "unix://" + path})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	cmd := []string{"test", "-f", "/tmp/ready"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ExecSync(ctx, "c1", cmd, time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
