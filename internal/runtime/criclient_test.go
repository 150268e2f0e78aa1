package runtime

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type versionServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
}

func (versionServer) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "testd", RuntimeVersion: "1.2.3", RuntimeApiVersion: "v1"}, nil
}

// shortSocket returns a socket path short enough for sun_path.
func shortSocket(t *testing.T) string {
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

func listen(t *testing.T, path string) *net.UnixListener {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serveGRPC serves a gRPC server at path, with the CRI runtime service if
// cri is set, until the test ends.
func serveGRPC(t *testing.T, path string, cri bool) {
	s := grpc.NewServer()
	if cri {
		runtimeapi.RegisterRuntimeServiceServer(s, versionServer{})
	}
	l := listen(t, path)
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(l) }()
	t.Cleanup(func() { s.Stop(); <-done })
}

// serveGarbage answers every connection with HTTP/1.1 and hangs up.
func serveGarbage(t *testing.T, path string) {
	l := listen(t, path)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
}

func TestNewChecksTheEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, path string)
		wantErr  error
		wantText string
	}{{
		name:     "missing socket",
		setup:    func(*testing.T, string) {},
		wantErr:  ErrRuntimeUnavailable,
		wantText: "socket does not exist",
	}, {
		name: "not a socket",
		setup: func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		wantErr:  ErrRuntimeUnavailable,
		wantText: "is not a socket",
	}, {
		name: "nothing listens",
		setup: func(t *testing.T, path string) {
			l := listen(t, path)
			l.SetUnlinkOnClose(false)
			l.Close()
		},
		wantErr:  ErrRuntimeUnavailable,
		wantText: "nothing accepts connections",
	}, {
		name:     "gRPC without the CRI",
		setup:    func(t *testing.T, path string) { serveGRPC(t, path, false) },
		wantErr:  ErrNotCRIv1,
		wantText: "runtime.v1 API is not served",
	}, {
		name:     "not gRPC at all",
		setup:    serveGarbage,
		wantErr:  ErrNotCRIv1,
		wantText: "does not answer as a CRI v1 gRPC server",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			path := shortSocket(t)
			tc.setup(t, path)
			endpoint := "unix://" + path
			rt, err := New(context.Background(), Options{Endpoint: endpoint, ConnectTimeout: 5 * time.Second})
			if err == nil {
				rt.Close()
				t.Fatal("New succeeded")
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantText) || !strings.Contains(err.Error(), endpoint) {
				t.Errorf("New error = %q, want %v naming the endpoint and saying %q", err, tc.wantErr, tc.wantText)
			}
		})
	}
}

func TestNewConnects(t *testing.T) {
	path := shortSocket(t)
	serveGRPC(t, path, true)
	for _, endpoint := range []string{"unix://" + path, path} {
		rt, err := New(context.Background(), Options{Endpoint: endpoint})
		if err != nil {
			t.Fatalf("New(%s): %v", endpoint, err)
		}
		if got, want := rt.Version(), (VersionInfo{RuntimeName: "testd", RuntimeVersion: "1.2.3", APIVersion: "v1"}); got != want {
			t.Errorf("Version() = %+v, want %+v", got, want)
		}
		if err := rt.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestNewRejectsOtherEndpoints(t *testing.T) {
	for _, endpoint := range []string{"", "tcp://127.0.0.1:1234", "unix://"} {
		if _, err := New(context.Background(), Options{Endpoint: endpoint}); err == nil {
			t.Errorf("New(%q) succeeded", endpoint)
		}
	}
}
