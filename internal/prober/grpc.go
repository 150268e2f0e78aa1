package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
)

// probeGRPC asks the container's gRPC server, over one fresh plaintext
// connection, for its health under the standard protocol
// (grpc.health.v1.Health/Check); SERVING is a success.
func probeGRPC(ctx context.Context, a *corev1.GRPCAction, host string, timeout time.Duration) (Result, string) {
	if host == "" {
		return Failure, "the pod has no IP yet"
	}
	if a.Port <= 0 || a.Port > 65535 {
		return Failure, fmt.Sprintf("port %d is out of range", a.Port)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := grpc.NewClient(net.JoinHostPort(host, strconv.Itoa(int(a.Port))),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent(userAgent))
	if err != nil {
		return Failure, err.Error()
	}
	defer func() { _ = conn.Close() }() // nothing was written through it
	service := ""
	if a.Service != nil {
		service = *a.Service
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(false))
	if err != nil {
		return Failure, fmt.Sprintf("health check: %v", err)
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return Failure, fmt.Sprintf("service unhealthy (responded with %q)", s)
	}
	return Success, ""
}
