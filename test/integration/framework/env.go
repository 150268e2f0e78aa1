package framework

import (
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Env is the running test environment.
type Env struct {
	// RepoRoot is the repository's top directory.
	RepoRoot string

	// NodeName is the node whose identity NodeClient carries.
	NodeName string
	// AdminClient acts as a cluster administrator (system:masters).
	AdminClient kubernetes.Interface
	AdminConfig *rest.Config
	// NodeClient acts as system:node:<NodeName> in system:nodes, so the
	// Node authorizer and NodeRestriction apply to it as to a real node.
	NodeClient kubernetes.Interface
	NodeConfig *rest.Config

	// CRIEndpoint is containerd's CRI socket, as "unix:///path".
	CRIEndpoint string
	// PauseImage and BusyboxImage are the locally built images, already
	// imported into containerd.
	PauseImage, BusyboxImage string
	// Registry is the tests' image registry, which holds the busybox
	// image as Registry.Image(PrivateBusybox + ":1").
	Registry *Registry
	// LogRoot is a directory tests may use for container logs.
	LogRoot string

	// APIServerURL is the apiserver's https URL.
	APIServerURL string
	// CAFile is the cluster CA certificate (PEM): it signed the apiserver's
	// serving certificate and signs the client certificates the
	// controller-manager issues.
	CAFile string
	// CAKeyFile is the cluster CA's key, for tests that sign a serving
	// certificate the apiserver or metrics-server is to trust.
	CAKeyFile string

	// KubectlBin and MetricsServerBin are the cached binaries of kubectl
	// and metrics-server at their pinned versions (hack/versions.sh).
	KubectlBin, MetricsServerBin string

	// NodeMonitorGracePeriod is how long the node lifecycle controller waits
	// for a node's Lease to be renewed before it marks the node
	// Ready=Unknown.
	NodeMonitorGracePeriod time.Duration

	auditLog string
	pids     map[string]process // by component: containerd, etcd, kube-apiserver, kube-controller-manager
}

// clientFor loads a kubeconfig written by controlplane-up.sh.
func clientFor(path string) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.UserAgent = "nodeagent-integration/" + filepath.Base(path)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, cs, nil
}
