package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/cgroups"
	"github.com/nodeagent/nodeagent/internal/configfile"
	"github.com/nodeagent/nodeagent/internal/images"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/podobjects"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// Options are nodeagent's settings; each field is one flag, and one key of
// the config file under the same name.
type Options struct {
	ConfigFile string

	ManifestDir           string
	ManifestURL           string
	ManifestURLHeaders    []string
	ManifestURLHeaderFile string
	FileCheckFrequency    time.Duration
	HTTPCheckFrequency    time.Duration

	CRIEndpoint           string
	RuntimeRequestTimeout time.Duration
	RootDir               string
	CheckpointFile        string
	NodeName              string
	PodLogDir             string
	ContainerLogs         ContainerLogs
	CgroupRoot            string
	CgroupDriver          string
	AllowedUnsafeSysctls  []string

	// How pods resolve names, and their hosts files.
	ClusterDNS    []string
	ClusterDomain string
	ResolvConf    string

	// ImagePullAlwaysIfAbsent makes imagePullPolicy Always act as
	// IfNotPresent (offline-first nodes without a registry).
	ImagePullAlwaysIfAbsent bool
	ImagePulls              ImagePulls
	ImageGC                 ImageGC
	Eviction                Eviction

	SyncFrequency        time.Duration
	RelistInterval       time.Duration
	HousekeepingInterval time.Duration

	// Connected mode: with a kubeconfig the agent is a Node of a cluster.
	Kubeconfig                string
	BootstrapKubeconfig       string
	CertDir                   string
	RotateCertificates        bool
	NodeLabels                map[string]string
	RegisterWithTaints        []string
	SystemReserved            map[string]string
	KubeReserved              map[string]string
	MaxPods                   int32
	NodeIP                    string
	NodeStatusUpdateFrequency time.Duration
	NodeStatusReportFrequency time.Duration
	NodeLeaseDurationSeconds  int32
	ObjectChangeDetection     string

	// The node API (connected mode): kubectl logs, exec, attach,
	// port-forward through the apiserver.
	Address           string
	Port              int32
	TLSCertFile       string
	TLSPrivateKeyFile string
	// RotateServerCertificates: the node API's certificate is requested
	// from the cluster (kubelet-serving signer) and renewed.
	RotateServerCertificates bool
	TLSMinVersion            string
	TLSCipherSuites          []string
	ClientCAFile             string
	// EnableSystemLogHandler serves /var/log under the node API's /logs/.
	EnableSystemLogHandler bool
	// EnableProfilingHandler serves Go's profiles on the node API, behind
	// its authorization (nodes/proxy), as the kubelet's field of the name.
	EnableProfilingHandler bool

	LocalAPISocket string
	ServeAddress   string
	Profiling      bool

	GCPercent int

	Logging *logsapi.LoggingConfiguration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		FileCheckFrequency:        20 * time.Second,
		HTTPCheckFrequency:        20 * time.Second,
		CRIEndpoint:               "unix:///run/containerd/containerd.sock",
		RuntimeRequestTimeout:     runtime.DefaultRequestTimeout,
		RootDir:                   configfile.DefaultRootDir,
		PodLogDir:                 configfile.DefaultPodLogDir,
		ContainerLogs:             defaultContainerLogs(),
		ImagePulls:                ImagePulls{Serialize: true, VerifyPolicy: string(images.NeverVerifyPreloadedImages)},
		ImageGC:                   defaultImageGC(),
		Eviction:                  defaultEviction(),
		CgroupRoot:                "/nodeagent",
		CgroupDriver:              string(cgroups.DriverCgroupfs),
		ResolvConf:                defaultResolvConf,
		SyncFrequency:             podworkers.DefaultResyncInterval,
		RelistInterval:            pleg.DefaultInterval,
		HousekeepingInterval:      agent.DefaultHousekeepingInterval,
		ServeAddress:              "127.0.0.1:10248",
		RotateCertificates:        true,
		MaxPods:                   node.DefaultMaxPods,
		NodeStatusUpdateFrequency: node.DefaultStatusUpdateFrequency,
		NodeStatusReportFrequency: node.DefaultStatusReportFrequency,
		NodeLeaseDurationSeconds:  node.DefaultLeaseDuration,
		ObjectChangeDetection:     string(podobjects.Watch),
		Address:                   "0.0.0.0",
		Port:                      10250,
		EnableSystemLogHandler:    true,
		EnableProfilingHandler:    true,
		GCPercent:                 50,
		Logging:                   logsapi.NewLoggingConfiguration(),
	}
}

// AddFlags registers every option on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "YAML file of settings: keyed by flag name (manifest-dir: /etc/nodeagent/manifests), or a kubelet's KubeletConfiguration (kubelet.config.k8s.io/v1beta1), whose fields nodeagent does not implement are refused by name; flags given on the command line win")

	fs.StringVar(&o.ManifestDir, "manifest-dir", o.ManifestDir, "directory of static pod manifests (*.yaml, *.yml, *.json), or a single manifest file")
	fs.StringVar(&o.ManifestURL, "manifest-url", o.ManifestURL, "URL serving a Pod or PodList manifest, polled every --http-check-frequency")
	fs.StringArrayVar(&o.ManifestURLHeaders, "manifest-url-header", o.ManifestURLHeaders, "headers sent with every --manifest-url request, in the kubelet's syntax: 'Name:value,Name:value'; repeatable, values of one name add up. Every user of the node can read the command line: put credentials in --manifest-url-header-file")
	fs.StringVar(&o.ManifestURLHeaderFile, "manifest-url-header-file", o.ManifestURLHeaderFile, "file of 'Name: value' lines (blank and # lines skipped), headers sent with every --manifest-url request, for credentials; it must be readable by its owner only (mode 0600 or 0400)")
	fs.DurationVar(&o.FileCheckFrequency, "file-check-frequency", o.FileCheckFrequency, "period of the full re-read of --manifest-dir (changes are picked up at once through inotify; this catches what it misses)")
	fs.DurationVar(&o.HTTPCheckFrequency, "http-check-frequency", o.HTTPCheckFrequency, "period between polls of --manifest-url")

	fs.StringVar(&o.CRIEndpoint, "cri-endpoint", o.CRIEndpoint, "CRI runtime socket (containerd), as unix:///path or a bare path")
	fs.DurationVar(&o.RuntimeRequestTimeout, "runtime-request-timeout", o.RuntimeRequestTimeout, "bound on every CRI call but image pulls and stops")
	fs.StringVar(&o.RootDir, "root-dir", o.RootDir, "state directory: pod volumes, the local API socket")
	fs.StringVar(&o.CheckpointFile, "checkpoint-file", o.CheckpointFile, "bbolt file (mode 0600) where the agent remembers its static pods across restarts; \"none\" disables it (default: <root-dir>/checkpoint.db)")
	fs.StringVar(&o.NodeName, "node-name", "", "this node's name; static pods are named <name>-<node-name> (default: the hostname, lowercased)")
	fs.StringVar(&o.PodLogDir, "pod-log-dir", o.PodLogDir, "directory of the pods' container logs")
	o.addContainerLogFlags(fs)
	fs.StringVar(&o.CgroupRoot, "cgroup-root", o.CgroupRoot, "cgroup under which the pods' QoS tree (kubepods) is made")
	fs.StringVar(&o.CgroupDriver, "cgroup-driver", o.CgroupDriver, "how pod cgroups are named: cgroupfs, or systemd (slices, as the kubelet names them; needs systemd as init); the container runtime must use the same")
	fs.StringSliceVar(&o.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", o.AllowedUnsafeSysctls, "unsafe sysctls pods may set besides the safe ones, as names or patterns ending in * (kernel.msg*,net.core.somaxconn), each of a namespaced sysctl; a pod setting any other is refused (SysctlForbidden), static or not")

	o.addDNSFlags(fs)
	fs.BoolVar(&o.ImagePullAlwaysIfAbsent, "image-pull-always-if-absent", o.ImagePullAlwaysIfAbsent,
		"imagePullPolicy Always pulls only an image that is absent, as IfNotPresent does (for nodes without a registry); default: Always pulls at every container start, as under the kubelet")
	o.addImagePullFlags(fs)
	o.addImageGCFlags(fs)
	o.addEvictionFlags(fs)

	fs.DurationVar(&o.SyncFrequency, "sync-frequency", o.SyncFrequency, "period of the resync of every running pod")
	fs.DurationVar(&o.RelistInterval, "relist-interval", o.RelistInterval, "period of the relist of the runtime's state, which notices exited containers")
	fs.DurationVar(&o.HousekeepingInterval, "housekeeping-interval", o.HousekeepingInterval, "period of the cleanup of orphaned pods and dead containers")

	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of this node's own identity (system:node:<node-name>): with it the agent registers its Node, keeps its status and Lease current (connected mode); without it the agent is standalone")
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig, "kubeconfig with bootstrap credentials (a bootstrap token): when --kubeconfig has no valid client certificate, the agent requests one for system:node:<node-name> with them (TLS bootstrapping), stores it in --cert-dir and writes --kubeconfig")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "directory of the node's client key and certificate (mode 0600 files) (default: <root-dir>/pki)")
	fs.BoolVar(&o.RotateCertificates, "rotate-certificates", o.RotateCertificates, "renew the client certificate before it expires (at 70 to 90% of its life), through the apiserver's CSR API")
	fs.StringToStringVar(&o.NodeLabels, "node-labels", o.NodeLabels, "labels the Node is registered with, key=value,...; a key under kubernetes.io or k8s.io must be one a node may set on itself (NodeRestriction)")
	fs.StringSliceVar(&o.RegisterWithTaints, "register-with-taints", o.RegisterWithTaints, "taints the Node is registered with, key[=value]:Effect,...; only at registration (a node may not change its own taints later)")
	fs.StringToStringVar(&o.SystemReserved, "system-reserved", o.SystemReserved, "resources held back from pods for the system, as cpu=500m,memory=1Gi,ephemeral-storage=1Gi,pid=1000")
	fs.StringToStringVar(&o.KubeReserved, "kube-reserved", o.KubeReserved, "resources held back from pods for the node's own daemons, as --system-reserved")
	fs.Int32Var(&o.MaxPods, "max-pods", o.MaxPods, "pods this node takes (its pods capacity)")
	fs.StringVar(&o.NodeIP, "node-ip", o.NodeIP, "the Node's InternalIP (default: the first global address of an interface that is up, IPv4 first)")
	fs.DurationVar(&o.NodeStatusUpdateFrequency, "node-status-update-frequency", o.NodeStatusUpdateFrequency, "how often the Node status is computed, and the most often it is written")
	fs.DurationVar(&o.NodeStatusReportFrequency, "node-status-report-frequency", o.NodeStatusReportFrequency, "the longest the Node status goes unwritten when nothing changes")
	fs.Int32Var(&o.NodeLeaseDurationSeconds, "node-lease-duration-seconds", o.NodeLeaseDurationSeconds, "duration of the node's Lease; it is renewed every quarter of it")
	fs.StringVar(&o.ObjectChangeDetection, "config-map-and-secret-change-detection-strategy", o.ObjectChangeDetection, "how the ConfigMaps and Secrets of pods from the apiserver are kept current: Watch (one watch per referenced mutable object; a change reaches the pods' volumes at once), Cache (read when needed and kept for the node's TTL, one minute by default), Get (read every time)")

	o.addNodeAPIFlags(fs)

	fs.StringVar(&o.LocalAPISocket, "local-api-socket", o.LocalAPISocket, "unix socket of the local API (mode 0600) (default: <root-dir>/nodeagent.sock)")
	fs.StringVar(&o.ServeAddress, "serve-address", o.ServeAddress, "host:port serving /healthz, /readyz and /metrics over plain HTTP; empty disables it. Keep it on loopback unless the network is trusted")

	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "also serve Go's pprof profiles under /debug/pprof/ on --serve-address")
	fs.IntVar(&o.GCPercent, "gc-percent", o.GCPercent, "how far the heap may grow, in percent of the live heap, before Go collects it (Go's GOGC, whose own default is 100): lower uses less memory and more CPU. The GOGC environment variable, if set, wins")

	logsapi.AddFlags(o.Logging, fs)

	addKubeletFlags(fs)
}

// complete fills what defaults to other options.
func (o *Options) complete() {
	if o.LocalAPISocket == "" {
		o.LocalAPISocket = configfile.LocalAPISocket(o.RootDir)
	}
	if o.CheckpointFile == "" && o.RootDir != "" {
		o.CheckpointFile = filepath.Join(o.RootDir, "checkpoint.db")
	}
	if o.CertDir == "" && o.RootDir != "" {
		o.CertDir = filepath.Join(o.RootDir, "pki")
	}
	o.NodeName = configfile.NodeName(o.NodeName)
}

// Validate reports every invalid option at once.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if o.ManifestDir == "" && o.ManifestURL == "" && o.Kubeconfig == "" {
		bad("no pod source: set --manifest-dir, --manifest-url or both (standalone mode takes pods from nowhere else)")
	}
	errs = append(errs, o.validateConnected()...)
	errs = append(errs, o.validateNodeAPI()...)
	errs = append(errs, o.validateDNS()...)
	errs = append(errs, o.validateContainerLogs()...)
	errs = append(errs, o.validateImagePulls()...)
	errs = append(errs, o.validateImageGC()...)
	errs = append(errs, o.validateEviction()...)
	if o.NodeName == "" {
		bad("--node-name is empty and the hostname is unknown")
	} else if msgs := validation.IsDNS1123Subdomain(o.NodeName); len(msgs) > 0 {
		bad("--node-name %q: %s", o.NodeName, strings.Join(msgs, "; "))
	}
	if o.CRIEndpoint == "" {
		bad("--cri-endpoint is required")
	}
	if o.RootDir == "" || !filepath.IsAbs(o.RootDir) {
		bad("--root-dir %q must be an absolute path", o.RootDir)
	}
	if o.PodLogDir == "" || !filepath.IsAbs(o.PodLogDir) {
		bad("--pod-log-dir %q must be an absolute path", o.PodLogDir)
	}
	if !strings.HasPrefix(o.CgroupRoot, "/") {
		bad("--cgroup-root %q must start with /", o.CgroupRoot)
	}
	if err := cgroups.Driver(o.CgroupDriver).Validate(); err != nil || o.CgroupDriver == "" {
		bad("--cgroup-driver %q must be cgroupfs or systemd", o.CgroupDriver)
	}
	if _, err := admission.NewSysctls(o.AllowedUnsafeSysctls, nil); err != nil {
		bad("--allowed-unsafe-sysctls: %v", err)
	}
	if o.ManifestURL != "" {
		if u, err := url.Parse(o.ManifestURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("--manifest-url %s must be an http:// or https:// URL with a host", config.RedactURL(o.ManifestURL))
		}
	} else if len(o.ManifestURLHeaders) > 0 || o.ManifestURLHeaderFile != "" {
		bad("--manifest-url-header and --manifest-url-header-file need a --manifest-url")
	}
	if _, err := o.urlHeader(); err != nil {
		errs = append(errs, err)
	}
	for name, d := range map[string]time.Duration{
		"--file-check-frequency": o.FileCheckFrequency, "--http-check-frequency": o.HTTPCheckFrequency,
		"--sync-frequency": o.SyncFrequency, "--relist-interval": o.RelistInterval,
		"--housekeeping-interval": o.HousekeepingInterval, "--runtime-request-timeout": o.RuntimeRequestTimeout,
	} {
		if d <= 0 {
			bad("%s must be positive, not %v", name, d)
		}
	}
	if o.GCPercent <= 0 {
		bad("--gc-percent must be positive, not %d", o.GCPercent)
	}
	if len(o.LocalAPISocket) >= 104 {
		bad("--local-api-socket %q is too long for a unix socket (max 103 bytes)", o.LocalAPISocket)
	}
	if o.ServeAddress != "" {
		if _, _, err := net.SplitHostPort(o.ServeAddress); err != nil {
			bad("--serve-address %q: %v", o.ServeAddress, err)
		}
	} else if o.Profiling {
		bad("--profiling needs a --serve-address to serve on")
	}
	return errors.Join(errs...)
}
