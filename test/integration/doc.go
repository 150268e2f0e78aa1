// Package integration holds nodeagent's integration tests. They run against
// the real parts a user runs the agent with: containerd (with runc and CNI)
// and a kube-apiserver backed by etcd, all started by the hack/ scripts.
//
// Run them with `make test-integration` (or `make test`, which runs them
// after the unit tests). A part that cannot start fails the tests with the
// reason; nothing is ever skipped for want of an environment.
package integration
