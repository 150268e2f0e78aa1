package app

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/version"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/nodeidentity"
	"github.com/nodeagent/nodeagent/internal/podobjects"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/runtimeclass"
	"github.com/nodeagent/nodeagent/internal/serviceenv"
	"github.com/nodeagent/nodeagent/internal/tokens"
	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/objectcache"
)

// validateConnected checks the connected-mode options; they are checked
// even without --kubeconfig, so that a config file is right before it is
// used to join a cluster.
func (o *Options) validateConnected() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := node.ValidateLabels(o.NodeLabels); err != nil {
		errs = append(errs, err)
	}
	if _, err := node.ParseTaints(o.RegisterWithTaints); err != nil {
		errs = append(errs, err)
	}
	for flag, m := range map[string]map[string]string{"--system-reserved": o.SystemReserved, "--kube-reserved": o.KubeReserved} {
		if _, err := resourceList(flag, m); err != nil {
			errs = append(errs, err)
		}
	}
	if o.BootstrapKubeconfig != "" && o.Kubeconfig == "" {
		bad("--bootstrap-kubeconfig needs a --kubeconfig, the file the agent writes its own credentials to")
	}
	if o.MaxPods <= 0 {
		bad("--max-pods must be positive, not %d", o.MaxPods)
	}
	if o.NodeIP != "" && net.ParseIP(o.NodeIP) == nil {
		bad("--node-ip %q is not an IP address", o.NodeIP)
	}
	if _, err := node.ParseThresholds(o.EvictionHard); err != nil {
		bad("--eviction-hard: %v", err)
	}
	for name, d := range map[string]time.Duration{
		"--eviction-pressure-transition-period": o.EvictionPressureTransition,
		"--node-status-update-frequency":        o.NodeStatusUpdateFrequency,
		"--node-status-report-frequency":        o.NodeStatusReportFrequency,
	} {
		if d <= 0 {
			bad("%s must be positive, not %v", name, d)
		}
	}
	if o.NodeStatusReportFrequency < o.NodeStatusUpdateFrequency {
		bad("--node-status-report-frequency (%v) must not be shorter than --node-status-update-frequency (%v)", o.NodeStatusReportFrequency, o.NodeStatusUpdateFrequency)
	}
	if _, err := podobjects.ParseStrategy(o.ObjectChangeDetection); err != nil {
		bad("--config-map-and-secret-change-detection-strategy: %v", err)
	}
	if o.NodeLeaseDurationSeconds < 4 {
		bad("--node-lease-duration-seconds must be at least 4 (it is renewed every quarter of it), not %d", o.NodeLeaseDurationSeconds)
	}
	return errs
}

// resourceList reads a --system-reserved style map.
func resourceList(flag string, m map[string]string) (v1.ResourceList, error) {
	out := v1.ResourceList{}
	for k, v := range m {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s=%q: %v", flag, k, v, err)
		}
		out[v1.ResourceName(k)] = q
	}
	return out, node.ValidateReserved(flag, out)
}

// identity loads (or bootstraps) the node's credentials; it blocks while
// a bootstrap CSR waits to be signed.
func (o *Options) identity(ctx context.Context, reg metrics.KubeRegistry, log logr.Logger) (*nodeidentity.Identity, error) {
	return nodeidentity.New(ctx, nodeidentity.Options{
		NodeName: o.NodeName, Kubeconfig: o.Kubeconfig, BootstrapKubeconfig: o.BootstrapKubeconfig,
		CertDir: o.CertDir, DisableRotation: !o.RotateCertificates,
		Logger: log.WithName("node-identity"), Registry: reg,
	})
}

// clientConfig is the identity's config, for protobuf and a user agent
// that names the agent and the node.
func (o *Options) clientConfig(id *nodeidentity.Identity) *rest.Config {
	cfg := id.RESTConfig()
	cfg.UserAgent = fmt.Sprintf("nodeagent/%s (%s)", version.Get().GitVersion, o.NodeName)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 50, 100
	return cfg
}

// newNode builds the part that keeps the Node and its Lease current.
func (o *Options) newNode(rt node.Runtime, agentHealth, sourcesReady func() error, apiPort int32, log logr.Logger) (*node.Node, error) {
	machine, err := node.ReadMachine()
	if err != nil {
		return nil, err
	}
	taints, _ := node.ParseTaints(o.RegisterWithTaints)   // validated
	thresholds, _ := node.ParseThresholds(o.EvictionHard) // validated
	var reserved []v1.ResourceList
	for flag, m := range map[string]map[string]string{"--system-reserved": o.SystemReserved, "--kube-reserved": o.KubeReserved} {
		r, _ := resourceList(flag, m) // validated
		reserved = append(reserved, r)
	}
	return node.New(node.Options{
		Name: o.NodeName, Runtime: rt,
		AgentHealth: agentHealth, SourcesReady: sourcesReady,
		Machine: machine, RootDir: o.RootDir,
		Labels: o.NodeLabels, Taints: taints, Reserved: reserved, MaxPods: o.MaxPods,
		NodeIP:     net.ParseIP(o.NodeIP),
		Thresholds: thresholds, PressureTransition: o.EvictionPressureTransition,
		StatusUpdateFrequency: o.NodeStatusUpdateFrequency, StatusReportFrequency: o.NodeStatusReportFrequency,
		LeaseDuration: o.NodeLeaseDurationSeconds,
		APIPort:       apiPort,
		AgentVersion:  version.Get().GitVersion,
		Logger:        log,
	})
}

// connectedParts are the parts of the agent that connected mode uses.
type connectedParts struct {
	rt         *runtime.Runtime
	agent      *agent.Agent
	merger     *config.Merger
	events     *events
	sourcesErr func() error
	reg        metrics.KubeRegistry
	objects    *podobjects.Objects
	services   *serviceenv.Services
	classes    *runtimeclass.Classes
}

// connected joins the cluster and keeps it current until ctx ends: the
// identity first (a bootstrap may wait for its CSR to be signed; the
// static pods run meanwhile), then its rotation, the Node and its Lease,
// the node API, the objects of the pods from the apiserver, the Services
// (for the pods' environment), the RuntimeClasses (for their sandboxes'
// handlers), the apiserver source, the
// mirror pods and pod statuses,
// and the events recorded so far and from then on.
func (o *Options) connected(ctx context.Context, p connectedParts, log logr.Logger) error {
	id, err := o.identity(ctx, p.reg, log)
	if err != nil {
		return fmt.Errorf("connected mode: %w", err)
	}
	client, err := kubernetes.NewForConfig(o.clientConfig(id))
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
	}
	p.events.connect(client)
	api, err := o.newNodeAPI(client, p.rt, p.agent, log)
	if err != nil {
		return err
	}
	var apiPort int32
	if api != nil {
		apiPort = api.Port()
	}
	nd, err := o.newNode(p.rt, p.agent.Ready, p.sourcesErr, apiPort, log)
	if err != nil {
		return err
	}
	source, err := config.NewAPIServerSource(config.APIServerOptions{
		Pods: client.CoreV1().Pods(metav1.NamespaceAll), NodeName: o.NodeName, Logger: log, Sink: p.merger,
	})
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return id.Run(gctx) })
	g.Go(func() error { return nd.Run(gctx, client) })
	if api != nil {
		g.Go(func() error { return api.Run(gctx) })
	}
	g.Go(func() error { return p.objects.Run(gctx, client, nd.Current, p.agent) })
	g.Go(func() error { return p.services.Run(gctx, client) })
	g.Go(func() error { return p.classes.Run(gctx, client) })
	g.Go(func() error { return source.Run(gctx) })
	g.Go(func() error {
		return p.agent.RunConnected(gctx, agent.Connection{Client: client, Node: mirror.NodeGetterFunc(nd.Current)})
	})
	return g.Wait()
}

// podObjects builds, in connected mode, the part that reads what the pods
// from the apiserver reference; nil in standalone mode. Once connected it
// tells the agent which pods to sync.
func (o *Options) podObjects(reg metrics.KubeRegistry, log logr.Logger) (*podobjects.Objects, error) {
	if o.Kubeconfig == "" {
		return nil, nil
	}
	mx, err := objectcache.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("registering the object cache metrics: %w", err)
	}
	tm := tokens.NewMetrics()
	if err := tm.Register(reg); err != nil {
		return nil, fmt.Errorf("registering the token metrics: %w", err)
	}
	strategy, _ := podobjects.ParseStrategy(o.ObjectChangeDetection) // validated
	return podobjects.New(podobjects.Options{Strategy: strategy, Metrics: mx, TokenMetrics: tm, Logger: log})
}
