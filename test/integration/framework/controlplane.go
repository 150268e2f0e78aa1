package framework

import (
	"testing"
	"time"
)

// The restarts below change the one shared control plane: tests that use
// them must not run in parallel with others.

// StopAPIServer stops kube-apiserver (SIGTERM; etcd and the
// controller-manager go on), as for an outage. StartAPIServer brings it back
// on the same port with the same state; if the test does not, its end does.
func (e *Env) StopAPIServer(t testing.TB) {
	t.Helper()
	if err := script(e.RepoRoot, "controlplane-down.sh", "kube-apiserver"); err != nil {
		t.Fatalf("stopping the apiserver: %v", err)
	}
	t.Cleanup(func() {
		// A no-op if the test started it again.
		if err := e.startComponent(nil, "kube-apiserver"); err != nil {
			t.Errorf("starting the apiserver again after the test: %v", err)
		}
	})
}

// StartAPIServer starts the apiserver StopAPIServer stopped and returns once
// it is ready (/readyz).
func (e *Env) StartAPIServer(t testing.TB) {
	t.Helper()
	if err := e.startComponent(nil, "kube-apiserver"); err != nil {
		t.Fatalf("starting the apiserver: %v", err)
	}
}

// RestartControllerManager restarts kube-controller-manager with
// --cluster-signing-duration=signingDuration, so the certificates it signs
// live that long; the test's end restarts it with the default again.
func (e *Env) RestartControllerManager(t testing.TB, signingDuration time.Duration) {
	t.Helper()
	if err := e.restartControllerManager([]string{"NODEAGENT_CLUSTER_SIGNING_DURATION=" + signingDuration.String()}); err != nil {
		t.Fatalf("restarting the controller-manager: %v", err)
	}
	t.Cleanup(func() {
		if err := e.restartControllerManager(nil); err != nil {
			t.Errorf("restoring the controller-manager after the test: %v", err)
		}
	})
}

func (e *Env) restartControllerManager(extraEnv []string) error {
	if err := script(e.RepoRoot, "controlplane-down.sh", "kube-controller-manager"); err != nil {
		return err
	}
	return e.startComponent(extraEnv, "kube-controller-manager")
}

// startComponent starts one stopped component of the control plane and
// records its new PID.
func (e *Env) startComponent(extraEnv []string, name string) error {
	if err := scriptEnv(e.RepoRoot, extraEnv, "controlplane-up.sh", name); err != nil {
		return err
	}
	_, err := e.readControlPlaneEnv()
	return err
}
