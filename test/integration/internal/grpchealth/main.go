package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// services maps a service name to the file whose presence makes it
// SERVING; "" is the server as a whole.
type services map[string]string

func (s services) String() string { return fmt.Sprint(map[string]string(s)) }

func (s services) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want name=path, got %q", v)
	}
	s[name] = path
	return nil
}

type server struct {
	healthpb.UnimplementedHealthServer
	files services
}

func (s *server) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	path, ok := s.files[req.GetService()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "unknown service %q", req.GetService())
	}
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if _, err := os.Stat(path); err == nil {
		st = healthpb.HealthCheckResponse_SERVING
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}

func main() {
	files := services{}
	port := flag.Int("port", 50051, "TCP port to serve on, on every address")
	whole := flag.String("file", "/tmp/healthy", "the server as a whole is SERVING while this file exists")
	flag.Var(files, "service", "a named service, SERVING while the file exists (name=path; repeatable)")
	flag.Parse()
	files[""] = *whole
	if err := run(*port, files); err != nil {
		fmt.Fprintln(os.Stderr, "grpchealth:", err)
		os.Exit(1)
	}
}

// run serves until SIGTERM or SIGINT. The server runs as its container's
// PID 1, which the kernel spares the default action of a signal: it must
// stop by itself.
func run(port int, files services) error {
	l, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, &server{files: files})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Stop()
	}()
	fmt.Printf("grpchealth: serving grpc.health.v1 on %s: %v\n", l.Addr(), files)
	return srv.Serve(l)
}
