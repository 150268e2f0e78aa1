package nodeapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics"
	"k8s.io/cri-client/pkg/logs"

	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// Runtime is what the server asks of the container runtime.
type Runtime interface {
	GetPodStatus(ctx context.Context, uid types.UID) (*runtime.PodStatus, error)
	RunningContainerID(ctx context.Context, uid types.UID, name string) (string, error)
	ExecURL(ctx context.Context, id string, cmd []string, o runtime.StreamOptions) (*url.URL, error)
	AttachURL(ctx context.Context, id string, o runtime.StreamOptions) (*url.URL, error)
	PortForwardURL(ctx context.Context, uid types.UID, ports []int32) (*url.URL, error)
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (runtime.ExecResult, error)
	ReadLogs(ctx context.Context, id string, opts *logs.LogOptions, stdout, stderr io.Writer) error
	ReadRemovedLogs(ctx context.Context, pod *corev1.Pod, container string, previous bool, opts *logs.LogOptions, stdout, stderr io.Writer) error
	ContainerStats(ctx context.Context) ([]runtime.ContainerUsage, error)
	GetPods(ctx context.Context) ([]*runtime.Pod, error)
	ImageFilesystem(ctx context.Context) (runtime.ImageFs, error)
	PodLogDir(pod *corev1.Pod) string
	ContainerPID(ctx context.Context, id string) (int, error)
}

// Options configure a Server. NodeName, Client, Runtime, Pods and a
// certificate (CertFile and KeyFile, or CertDir) are required.
type Options struct {
	// Address and Port are where the server listens (Port 0 picks a free
	// one, for tests: the wiring treats --port=0 as "not served").
	Address string
	Port    int32

	// GetCertificate, when set, gives the serving certificate at each
	// TLS handshake (one the cluster issued and renews), and CertFile,
	// KeyFile, CertDir, Hostnames and IPs are not used; an error it
	// returns fails that handshake.
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// CertFile and KeyFile are the serving certificate; when both are
	// empty, a self-signed one is made in CertDir (and kept there), for
	// Hostnames and IPs.
	CertFile, KeyFile string
	CertDir           string
	Hostnames         []string
	IPs               []net.IP
	// MinTLSVersion (tls.VersionTLS12 when 0) and CipherSuites (Go's
	// defaults when empty) bound the TLS handshake.
	MinTLSVersion uint16
	CipherSuites  []uint16

	// ClientCAFile holds the CAs whose client certificates authenticate a
	// request; empty: only bearer tokens do.
	ClientCAFile string
	// NodeName is the Node the requests are authorized against; Client
	// (the node's own identity) sends the TokenReviews and
	// SubjectAccessReviews.
	NodeName string
	Client   kubernetes.Interface

	Runtime Runtime
	// Pods returns the pods the node runs, with their statuses, read-only.
	Pods func() []*corev1.Pod
	// NodeUsage reads what the whole node uses, for /metrics/resource.
	NodeUsage func() (node.Usage, error)
	// NodeInterfaces reads the host's network interfaces, and
	// PodInterfaces those of the network namespace of a process, for the
	// node's and the pods' networks in /stats/summary; nil: none.
	NodeInterfaces func() ([]host.Interface, error)
	PodInterfaces  func(pid int) ([]host.Interface, error)
	// RootDir is the agent's state directory: its filesystem is the
	// node's in /stats/summary.
	RootDir string
	// VolumeUsage measures the bytes an emptyDir of a pod holds on disk,
	// for /stats/summary; nil: no volume figures.
	VolumeUsage func(uid types.UID, volume string) (int64, error)

	// Metrics is the agent's registry, served on /metrics; ProbeMetrics
	// the prober's, on /metrics/probes.
	Metrics, ProbeMetrics metrics.Gatherer
	// Config is the agent's effective configuration, served on /configz
	// as JSON.
	Config any
	// Profiling serves Go's pprof profiles under /debug/pprof/.
	Profiling bool

	// RunTimeout bounds a command run through /run; default 1 minute.
	RunTimeout time.Duration

	// SystemLogDir is the directory /logs/ serves, as the kubelet's
	// system log handler serves /var/log; empty: /logs/ answers that it
	// is disabled.
	SystemLogDir string

	Logger logr.Logger

	// readHeaderTimeout bounds the TLS handshake and the request's
	// headers; readHeaderTimeout (the constant) unless a test shortens it.
	readHeaderTimeout time.Duration
}

// How long the server keeps the apiserver's answers: a TokenReview's, an
// allowing SubjectAccessReview's and a denying one's (the kubelet's
// webhook cacheTTL, cacheAuthorizedTTL and cacheUnauthorizedTTL).
const (
	TokenCacheTTL = tokenCacheTTL
	AllowCacheTTL = allowCacheTTL
	DenyCacheTTL  = denyCacheTTL
)

// ErrInvalidOptions is returned by New for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid node API options")

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field, and fills in the defaults.
func (o *Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...)))
	}
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"NodeName", o.NodeName == ""}, {"Client", o.Client == nil}, {"Runtime", o.Runtime == nil},
		{"Pods", o.Pods == nil}, {"NodeUsage", o.NodeUsage == nil}, {"RootDir", o.RootDir == ""},
		{"Metrics", o.Metrics == nil}, {"ProbeMetrics", o.ProbeMetrics == nil}, {"Config", o.Config == nil},
	} {
		if f.missing {
			bad("%s is required", f.name)
		}
	}
	switch {
	case o.GetCertificate != nil && o.CertFile != "":
		bad("GetCertificate and CertFile: the serving certificate comes from one of them")
	case o.GetCertificate != nil:
	case (o.CertFile == "") != (o.KeyFile == ""):
		bad("CertFile and KeyFile: a serving certificate needs both")
	case o.CertFile == "" && o.CertDir == "":
		bad("CertFile and CertDir: no serving certificate and no directory to make one in")
	}
	if o.Port < 0 || o.Port > 65535 {
		bad("Port %d is out of range", o.Port)
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = time.Minute
	}
	if o.readHeaderTimeout <= 0 {
		o.readHeaderTimeout = readHeaderTimeout
	}
	if o.MinTLSVersion == 0 {
		o.MinTLSVersion = tls.VersionTLS12
	}
	return errors.Join(errs...)
}
