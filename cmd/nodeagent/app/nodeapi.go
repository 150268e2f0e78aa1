package app

import (
	"context"
	"crypto/tls"
	"errors"
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
	"github.com/nodeagent/nodeagent/internal/nodeidentity"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/volumes"
)

// systemLogDir is what the node API serves under /logs/, as the kubelet.
const systemLogDir = "/var/log"

func (o *Options) addNodeAPIFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Address, "address", o.Address, "IP address the node API (logs, exec, attach, port-forward; connected mode only) listens on")
	fs.Int32Var(&o.Port, "port", o.Port, "port of the node API, which the Node reports in status.daemonEndpoints; 0 disables it")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "serving certificate of the node API (with --tls-private-key-file); without both, and without --rotate-server-certificates, a self-signed one is made in --cert-dir")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "key of --tls-cert-file")
	fs.BoolVar(&o.RotateServerCertificates, "rotate-server-certificates", o.RotateServerCertificates, "request the node API's serving certificate from the cluster (a CSR for the kubernetes.io/kubelet-serving signer, which someone must approve), keep it in --cert-dir and renew it before it expires; until one is issued the node API refuses TLS handshakes, or serves --tls-cert-file if given")
	fs.StringVar(&o.TLSMinVersion, "tls-min-version", o.TLSMinVersion, "lowest TLS version the node API accepts: "+fmt.Sprint(cliflag.TLSPossibleVersions())+" (default VersionTLS12)")
	fs.StringSliceVar(&o.TLSCipherSuites, "tls-cipher-suites", o.TLSCipherSuites, "cipher suites the node API offers for TLS 1.2 (TLS 1.3's are Go's); default: Go's. Possible values: "+fmt.Sprint(cliflag.TLSCipherPossibleValues()))
	fs.BoolVar(&o.EnableSystemLogHandler, "enable-system-log-handler", o.EnableSystemLogHandler, "serve the node's system logs ("+systemLogDir+") under the node API's /logs/, to those the apiserver allows nodes/log")
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
	if o.RotateServerCertificates && o.Port == 0 {
		bad("--rotate-server-certificates needs the node API, which --port=0 disables")
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
// pods, the emptyDirs, the metrics registries it serves, and for a
// serving certificate from the cluster the node's identity and its Node.
type nodeAPIParts struct {
	rt          *runtime.Runtime
	agent       *agent.Agent
	vols        *volumes.Manager
	reg, probes metrics.KubeRegistry
	conn        *connection
	node        *node.Node
}

// nodeAPI builds the node API once connected, bound to its port, and
// serves it until ctx ends; with --port=0 there is none. With
// --rotate-server-certificates its certificate is the cluster's, for the
// addresses the Node reports, requested with the node's identity.
func (o *Options) nodeAPI(p nodeAPIParts, log logr.Logger) connectedPart {
	return func(ctx context.Context, client kubernetes.Interface) error {
		if o.Port == 0 {
			log.Info("the node API is disabled (--port=0): kubectl logs, exec, attach and port-forward cannot reach this node")
			return nil
		}
		var serving *nodeidentity.Serving
		if o.RotateServerCertificates {
			var err error
			if serving, err = o.servingCertificate(p.conn.id, p.node, p.reg, log); err != nil {
				return err
			}
		}
		api, err := o.newNodeAPI(client, p, serving, log)
		if err != nil {
			return err
		}
		if serving == nil {
			return api.Run(ctx)
		}
		// Renewals end with the server, and the server with ctx.
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		served := make(chan error, 1)
		go func() {
			err := api.Run(sctx)
			cancel()
			served <- err
		}()
		rerr := serving.Run(sctx)
		return errors.Join(<-served, rerr)
	}
}

// servingCertificate is the node API's certificate from the cluster
// (--rotate-server-certificates), for the addresses of the Node as last
// written or seen; none until it is registered.
func (o *Options) servingCertificate(id *nodeidentity.Identity, nd *node.Node, reg metrics.KubeRegistry, log logr.Logger) (*nodeidentity.Serving, error) {
	return id.NewServing(nodeidentity.ServingOptions{
		Addresses: func() []corev1.NodeAddress {
			n, err := nd.Current(context.Background())
			if err != nil {
				return nil
			}
			return n.Status.Addresses
		},
		CertFile: o.TLSCertFile, KeyFile: o.TLSPrivateKeyFile,
		Logger: log.WithName("serving-certificate"), Registry: reg,
	})
}

// newNodeAPI builds the node API, bound to its port. It is served in
// connected mode only: every request is authenticated and authorized by
// the apiserver. Its certificate is serving's when not nil, else
// --tls-cert-file's or a self-signed one.
func (o *Options) newNodeAPI(client kubernetes.Interface, p nodeAPIParts, serving *nodeidentity.Serving, log logr.Logger) (*nodeapi.Server, error) {
	var logDir string
	if o.EnableSystemLogHandler {
		logDir = systemLogDir
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
	certFile, keyFile := o.TLSCertFile, o.TLSPrivateKeyFile
	var getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	if serving != nil {
		// serving reads --tls-cert-file itself, until it has its own.
		certFile, keyFile, getCert = "", "", serving.GetCertificate
	}
	return nodeapi.New(nodeapi.Options{
		Address: o.Address, Port: o.Port, GetCertificate: getCert,
		CertFile: certFile, KeyFile: keyFile, CertDir: o.CertDir,
		Hostnames: hostnames, IPs: ips,
		MinTLSVersion: minVersion, CipherSuites: suites,
		ClientCAFile: o.ClientCAFile, NodeName: o.NodeName, Client: client,
		Runtime: p.rt, Pods: agentPods(p.agent), NodeUsage: node.ReadUsage,
		NodeInterfaces: host.Interfaces, PodInterfaces: host.NamespaceInterfaces, RootDir: o.RootDir, VolumeUsage: func(uid types.UID, volume string) (int64, error) {
			return p.vols.EmptyDirUsage(uid, volume, math.MaxInt64)
		},
		Metrics: servedMetrics(p.reg), ProbeMetrics: p.probes, Config: o.kubeletConfig(), Profiling: o.EnableProfilingHandler,
		SystemLogDir: logDir,
		Logger:       log,
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
