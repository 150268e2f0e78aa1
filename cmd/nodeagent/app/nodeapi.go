package app

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/nodeapi"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/volumes"
)

func (o *Options) addNodeAPIFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Address, "address", o.Address, "IP address the node API (logs, exec, attach, port-forward; connected mode only) listens on")
	fs.Int32Var(&o.Port, "port", o.Port, "port of the node API, which the Node reports in status.daemonEndpoints; 0 disables it")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "serving certificate of the node API (with --tls-private-key-file); without both, a self-signed one is made in --cert-dir")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "key of --tls-cert-file")
	fs.StringVar(&o.TLSMinVersion, "tls-min-version", o.TLSMinVersion, "lowest TLS version the node API accepts: "+fmt.Sprint(cliflag.TLSPossibleVersions())+" (default VersionTLS12)")
	fs.StringSliceVar(&o.TLSCipherSuites, "tls-cipher-suites", o.TLSCipherSuites, "cipher suites the node API offers for TLS 1.2 (TLS 1.3's are Go's); default: Go's. Possible values: "+fmt.Sprint(cliflag.TLSCipherPossibleValues()))
	fs.BoolVar(&o.EnableProfilingHandler, "enable-profiling-handler", o.EnableProfilingHandler, "serve Go's pprof profiles under /debug/pprof/ on the node API, to whom the apiserver allows nodes/proxy (as the kubelet's enableProfilingHandler); --profiling serves them on --serve-address, unauthenticated")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle whose client certificates authenticate requests to the node API (the apiserver's --kubelet-client-certificate must be signed by one); without it only bearer tokens, reviewed by the apiserver, do")
}

// validateNodeAPI checks the node API's options, in standalone mode too
// (where it is not served), so that a config file is right before it
// joins a cluster.
func (o *Options) validateNodeAPI() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if net.ParseIP(o.Address) == nil {
		bad("--address %q is not an IP address", o.Address)
	}
	if o.Port < 0 || o.Port > 65535 {
		bad("--port %d is not a port (1-65535, or 0 to disable the node API)", o.Port)
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		bad("--tls-cert-file and --tls-private-key-file go together")
	}
	if o.TLSMinVersion != "" {
		if _, err := cliflag.TLSVersion(o.TLSMinVersion); err != nil {
			bad("--tls-min-version: %v", err)
		}
	}
	if _, err := cliflag.TLSCipherSuites(o.TLSCipherSuites); err != nil {
		bad("--tls-cipher-suites: %v", err)
	}
	if o.ClientCAFile != "" {
		if _, err := os.Stat(o.ClientCAFile); err != nil {
			bad("--client-ca-file: %v", err)
		}
	}
	return errs
}

// nodeAPIParts are what the node API reads: the runtime, the agent's
// pods, the emptyDirs, and the metrics registries it serves.
type nodeAPIParts struct {
	rt          *runtime.Runtime
	agent       *agent.Agent
	vols        *volumes.Manager
	reg, probes metrics.KubeRegistry
}

// nodeAPI builds the node API once connected, bound to its port, and
// serves it until ctx ends; with --port=0 there is none.
func (o *Options) nodeAPI(p nodeAPIParts, log logr.Logger) connectedPart {
	return func(ctx context.Context, client kubernetes.Interface) error {
		api, err := o.newNodeAPI(client, p, log)
		if err != nil || api == nil {
			return err
		}
		return api.Run(ctx)
	}
}

// newNodeAPI builds the node API, bound to its port, or nil when --port
// is 0. It is served in connected mode only: every request is
// authenticated and authorized by the apiserver.
func (o *Options) newNodeAPI(client kubernetes.Interface, p nodeAPIParts, log logr.Logger) (*nodeapi.Server, error) {
	if o.Port == 0 {
		log.Info("the node API is disabled (--port=0): kubectl logs, exec, attach and port-forward cannot reach this node")
		return nil, nil
	}
	minVersion, _ := cliflag.TLSVersion(o.TLSMinVersion)    // validated
	suites, _ := cliflag.TLSCipherSuites(o.TLSCipherSuites) // validated
	var ips []net.IP
	if ip := node.InternalIP(net.ParseIP(o.NodeIP)); ip != nil {
		ips = append(ips, ip)
	}
	if ip := net.ParseIP(o.Address); ip != nil && !ip.IsUnspecified() {
		ips = append(ips, ip)
	}
	hostnames := []string{o.NodeName}
	if h, err := os.Hostname(); err == nil && h != o.NodeName {
		hostnames = append(hostnames, h)
	}
	return nodeapi.New(nodeapi.Options{
		Address: o.Address, Port: o.Port,
		CertFile: o.TLSCertFile, KeyFile: o.TLSPrivateKeyFile, CertDir: o.CertDir,
		Hostnames: hostnames, IPs: ips,
		MinTLSVersion: minVersion, CipherSuites: suites,
		ClientCAFile: o.ClientCAFile, NodeName: o.NodeName, Client: client,
		Runtime: p.rt, Pods: agentPods(p.agent), NodeUsage: node.ReadUsage,
		NodeInterfaces: host.Interfaces, PodInterfaces: host.NamespaceInterfaces, RootDir: o.RootDir, VolumeUsage: func(uid types.UID, volume string) (int64, error) {
			return p.vols.EmptyDirUsage(uid, volume, math.MaxInt64)
		},
		Metrics: p.reg, ProbeMetrics: p.probes, Config: o.kubeletConfig(), Profiling: o.EnableProfilingHandler,
		Logger: log,
	})
}

// agentPods lists the agent's pods with the statuses it computed.
func agentPods(ag *agent.Agent) func() []*corev1.Pod {
	return func() []*corev1.Pod {
		infos := ag.Pods()
		out := make([]*corev1.Pod, 0, len(infos))
		for _, info := range infos {
			p := *info.Pod
			p.Status = info.Status
			out = append(out, &p)
		}
		return out
	}
}
