package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/cgroups"
	"github.com/nodeagent/nodeagent/internal/downward"
	"github.com/nodeagent/nodeagent/internal/images"
)

// Options configure a Runtime. Only Endpoint is required.
type Options struct {
	// Endpoint is the CRI socket, as "unix:///run/containerd/containerd.sock"
	// or a bare path.
	Endpoint string
	// ConnectTimeout bounds the connection and Version check in New
	// (default 10 s); RequestTimeout bounds every later CRI call but image
	// pulls and the grace period of a stop (default DefaultRequestTimeout).
	ConnectTimeout time.Duration
	RequestTimeout time.Duration
	// RuntimeHandler selects the runtime's handler for new sandboxes of
	// pods that name no RuntimeClass (default: the runtime's default).
	RuntimeHandler string
	// RuntimeClasses resolves the RuntimeClass a pod names to its handler
	// (connected mode); nil (standalone) refuses such a pod with
	// ErrUnsupported.
	RuntimeClasses RuntimeClasses

	// LogRoot holds the pods' log directories (default /var/log/pods).
	LogRoot string
	// PodsDir holds the pods' directories, <PodsDir>/<uid>, where each
	// container instance gets the file mounted at its
	// terminationMessagePath; empty: no such file, as the kubelet without
	// a pod directory.
	PodsDir string
	// Cgroups keeps the pods' cgroups: SyncPod makes a pod's before its
	// sandbox and names it as the sandbox's cgroup parent, KillPod removes
	// it. Default: the cgroupfs driver under /nodeagent.
	Cgroups *cgroups.Manager
	// Resized remembers what in-place resizes gave running containers
	// (resize.go); nil: a resize is not remembered across restarts of the
	// agent, and a container whose resize is not known is resized again.
	Resized ResizeRecords

	// MemoryCapacity is the machine's memory in bytes (MemTotal), against
	// which a Burstable container's memory request sets its OOM score
	// adjustment; zero counts every request as nothing (score 999).
	MemoryCapacity int64

	// SELinuxEnabled says the node runs SELinux: the mounts the agent made
	// (Mount.SELinuxRelabel, /etc/hosts, the termination message file)
	// are relabelled for the container by the runtime.
	SELinuxEnabled bool

	// SeccompProfileRoot holds the Localhost seccomp profiles that pods
	// name relative to it (default /var/lib/nodeagent/seccomp).
	SeccompProfileRoot string

	// BackoffInitial and BackoffMax bound the crash-loop back-off and the
	// image pull back-off (default 10 s and 5 min, the kubelet's for
	// both); a container that ran BackoffReset (default 10 min) starts its
	// back-off over.
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	BackoffReset   time.Duration

	// NodeDockerConfigPaths are where the node's own registry credentials
	// may be (images.NodeDockerConfigPaths); the first file that exists
	// is read at each pull. Empty: none.
	NodeDockerConfigPaths []string
	// CredentialProviders are the node's credential provider plugins,
	// asked after the node's docker config; nil: none.
	CredentialProviders *images.CredentialProviders

	// PullRecords remembers which credentials pulled each image, so that
	// a pod may use a present image only with the right to it (the
	// kubelet's ensure-secret-pulled-images rule, under its verification
	// policy); nil: every present image is every pod's.
	PullRecords *images.PullRecords

	// ImagePullAlwaysIfAbsent makes pull policy Always act as
	// IfNotPresent: a present image is used as it is, without asking the
	// registry (for nodes without one). Off, Always pulls at every start,
	// as under the kubelet.
	ImagePullAlwaysIfAbsent bool
	// MaxParallelImagePulls bounds the image pulls under way at once (1:
	// serialized); 0 for no bound. Containers that ask for the same image
	// with the same credentials at once share one pull.
	MaxParallelImagePulls int

	// MaxDeadPerContainer is how many exited instances of each container
	// GarbageCollect keeps (default 1), so that restart counts and the last
	// termination survive.
	MaxDeadPerContainer int

	// Sources reads the ConfigMaps and Secrets API pods' environments
	// name; nil (standalone) refuses them with ErrUnsupported. Static
	// pods never read through it.
	Sources EnvSources
	// Services gives the pods' service environment variables (connected
	// mode); nil (standalone): none, as the kubelet without an apiserver.
	Services ServiceEnv
	// HostIPs are the node's IPs, primary first: status.hostIP(s) in a
	// fieldRef.
	HostIPs []string
	// ClusterDNS are the cluster's DNS servers (IPs) and ClusterDomain its
	// DNS domain (cluster.local): pods with dnsPolicy ClusterFirst resolve
	// through them, with the search domains of their namespace. Without
	// ClusterDNS such pods get what Default gives, with a
	// MissingClusterDNS warning.
	ClusterDNS    []string
	ClusterDomain string
	// ResolvConf is the node's resolver file, whose nameservers, search
	// domains and options pods with dnsPolicy Default get, and whose
	// search domains follow the cluster's under ClusterFirst. Empty: none
	// (the kubelet's --resolv-conf=""): such pods ask 127.0.0.1 (::1 on an
	// IPv6 node), with no search domain.
	ResolvConf string
	// Allocatable gives the node's allocatable resources, which a
	// resourceFieldRef of a limit the container does not set reports; nil
	// fails such a container with ErrContainerConfig.
	Allocatable downward.Allocatable

	// Registry, when set, gets the kubelet's runtime metrics: every CRI
	// call counted and timed by operation, and the sandboxes and
	// containers started.
	Registry metrics.KubeRegistry

	Logger logr.Logger
	Clock  clock.Clock
}

// DefaultRequestTimeout bounds a CRI call when Options.RequestTimeout is
// not set.
const DefaultRequestTimeout = 2 * time.Minute

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field; zero means the default.
func (o Options) validate() error {
	var errs []error
	if o.Endpoint == "" {
		errs = append(errs, fmt.Errorf("%w: Endpoint is required", ErrInvalidOptions))
	}
	for name, d := range map[string]time.Duration{
		"ConnectTimeout": o.ConnectTimeout, "RequestTimeout": o.RequestTimeout,
		"BackoffInitial": o.BackoffInitial, "BackoffMax": o.BackoffMax, "BackoffReset": o.BackoffReset,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%w: %s is negative (%v)", ErrInvalidOptions, name, d))
		}
	}
	for name, n := range map[string]int{"MaxParallelImagePulls": o.MaxParallelImagePulls, "MaxDeadPerContainer": o.MaxDeadPerContainer} {
		if n < 0 {
			errs = append(errs, fmt.Errorf("%w: %s is negative (%d)", ErrInvalidOptions, name, n))
		}
	}
	return errors.Join(errs...)
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ConnectTimeout, 10*time.Second)
	def(&o.RequestTimeout, DefaultRequestTimeout)
	def(&o.BackoffInitial, 10*time.Second)
	def(&o.BackoffMax, 5*time.Minute)
	def(&o.BackoffReset, 10*time.Minute)
	if o.LogRoot == "" {
		o.LogRoot = "/var/log/pods"
	}
	if o.Cgroups == nil {
		o.Cgroups, _ = cgroups.New(cgroups.Options{Logger: o.Logger}) // cgroupfs is never refused
	}
	if o.SeccompProfileRoot == "" {
		o.SeccompProfileRoot = "/var/lib/nodeagent/seccomp"
	}
	if o.MaxDeadPerContainer <= 0 {
		o.MaxDeadPerContainer = 1
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

// VersionInfo is what the runtime said about itself when New connected.
type VersionInfo struct {
	RuntimeName, RuntimeVersion, APIVersion string
}

// Runtime runs pods on a CRI runtime. It is safe for concurrent use; calls
// for different pods proceed in parallel, calls for one pod must not (the
// pod workers serialise them).
type Runtime struct {
	opts    Options
	rt      criRuntime
	img     criImages
	closer  func() error
	backoff *backoff
	// pullBackoff paces failed image pulls, per pod and image.
	pullBackoff *pullBackoff
	pulls       *pullQueue
	version     VersionInfo
	host        hostSecurity
	metrics     *runtimeMetrics
	log         logr.Logger
	clock       clock.Clock
}

// New connects to the CRI runtime at opts.Endpoint and checks that it
// serves CRI v1. The error names the endpoint and matches
// ErrRuntimeUnavailable or ErrNotCRIv1.
func New(ctx context.Context, opts Options) (*Runtime, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.defaults()
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("runtime metrics: %w", err)
	}
	c, v, err := dialCRI(ctx, opts.Endpoint, opts.ConnectTimeout, opts.RequestTimeout, m.intercept)
	if err != nil {
		return nil, err
	}
	r := newRuntime(opts, c, c)
	r.metrics = m
	r.host = detectHostSecurity()
	r.closer = c.close
	r.version = VersionInfo{RuntimeName: v.GetRuntimeName(), RuntimeVersion: v.GetRuntimeVersion(), APIVersion: v.GetRuntimeApiVersion()}
	r.log.Info("connected to the container runtime", "endpoint", opts.Endpoint,
		"runtime", r.version.RuntimeName, "version", r.version.RuntimeVersion, "api", r.version.APIVersion,
		"apparmor", r.host.appArmor, "selinux", r.host.seLinux)
	return r, nil
}

// newRuntime builds a Runtime over given CRI services; tests pass fakes.
// Its metrics are unregistered, hence inert, until New sets them.
func newRuntime(opts Options, rt criRuntime, img criImages) *Runtime {
	opts.defaults()
	inert, _ := newMetrics(nil) // without a registry it cannot fail
	return &Runtime{
		metrics:     inert,
		opts:        opts,
		rt:          rt,
		img:         img,
		closer:      func() error { return nil },
		backoff:     newBackoff(opts.Clock, opts.BackoffInitial, opts.BackoffMax, opts.BackoffReset),
		pullBackoff: newPullBackoff(opts.Clock, opts.BackoffInitial, opts.BackoffMax),
		pulls:       newPullQueue(opts.MaxParallelImagePulls),
		log:         opts.Logger.WithName("runtime"),
		clock:       opts.Clock,
	}
}

// Version returns what the runtime reported when New connected.
func (r *Runtime) Version() VersionInfo { return r.version }

// Close closes the connection to the runtime. What runs keeps running.
func (r *Runtime) Close() error {
	if err := r.closer(); err != nil {
		return fmt.Errorf("closing the CRI connection: %w", err)
	}
	return nil
}
