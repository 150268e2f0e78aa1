// Command grpchealth is a gRPC server that answers only the standard
// health protocol (grpc.health.v1.Health/Check), for the integration
// tests of gRPC probes: no container image here carries a gRPC server, so
// the tests build this one statically and run it in a busybox container
// from a hostPath volume.
//
// A service's status follows a file, so a test flips it with an exec in
// the container: SERVING while the file exists, NOT_SERVING otherwise.
// The server as a whole (the empty service name) follows -file; each
// -service name=path adds a named service; any other name is NOT_FOUND,
// as the protocol says.
//
//	grpchealth -port 50051 -file /tmp/healthy -service live=/tmp/live
package main
