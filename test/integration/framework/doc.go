// Package framework brings up the real test environment once per test
// package and hands it to tests as an *Env.
//
//	var env *framework.Env
//
//	func TestMain(m *testing.M) { os.Exit(framework.Run(m, &env)) }
//
// Run starts containerd, the image registry (hack/registry-up.sh, with
// the busybox image pushed to it) and the control plane (etcd, kube-apiserver,
// kube-controller-manager, set up as kubeadm sets up a cluster) through
// hack/containerd-up.sh and hack/controlplane-up.sh, runs the tests, checks
// that they left no pod sandbox or container behind and that the apiserver
// refused (403) no request by a node or bootstrap identity (its audit log
// records every request; see ExpectForbidden), and stops everything again.
// Any failure to start is reported and makes the package fail.
//
// Env also issues bootstrap tokens and their kubeconfigs, counts requests in
// the audit log (CountRequests), and stops or restarts the apiserver and the
// controller-manager for tests of outages and certificate rotation.
package framework
