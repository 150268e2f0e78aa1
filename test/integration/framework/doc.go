// Package framework brings up the real test environment once per test
// package and hands it to tests as an *Env.
//
//	var env *framework.Env
//
//	func TestMain(m *testing.M) { os.Exit(framework.Run(m, &env)) }
//
// Run starts containerd and the control plane through hack/containerd-up.sh
// and hack/controlplane-up.sh, runs the tests, checks that they left no pod
// sandbox or container behind, and stops everything again. Any failure to
// start is reported and makes the package fail.
package framework
