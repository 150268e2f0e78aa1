package app

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/version"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/apisync"
	"github.com/nodeagent/nodeagent/internal/eviction"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/nodeidentity"
	"github.com/nodeagent/nodeagent/internal/podobjects"
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
	for name, d := range map[string]time.Duration{
		"--node-status-update-frequency": o.NodeStatusUpdateFrequency,
		"--node-status-report-frequency": o.NodeStatusReportFrequency,
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

// reserved are the resources held back from pods (validated).
func (o *Options) reserved() []corev1.ResourceList {
	var out []corev1.ResourceList
	for flag, m := range map[string]map[string]string{"--system-reserved": o.SystemReserved, "--kube-reserved": o.KubeReserved} {
		r, _ := resourceList(flag, m) // validated
		out = append(out, r)
	}
	return out
}

// resourceList reads a --system-reserved style map.
func resourceList(flag string, m map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for k, v := range m {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s=%q: %v", flag, k, v, err)
		}
		out[corev1.ResourceName(k)] = q
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

// newNode builds the part that keeps the Node and its Lease current; it
// runs once connected. The node API, when served, is on --port.
// Its pressure conditions are those of the eviction manager; apiserverBack
// is told when the apiserver answers again after an outage, which readyz
// asks while it is away.
func (o *Options) newNode(rt node.Runtime, machine node.Machine, ag *agent.Agent, sourcesReady func() error, pressure func() map[string]bool,
	closeConnections, apiserverBack func(), readyz func(context.Context) bool, log logr.Logger) (*node.Node, error) {
	taints, _ := node.ParseTaints(o.RegisterWithTaints)        // validated
	thresholds, _ := eviction.ParseThresholds(o.Eviction.Hard) // validated
	return node.New(node.Options{
		Name: o.NodeName, Runtime: rt,
		AgentHealth: ag.Ready, SourcesReady: sourcesReady,
		Machine: machine, RootDir: o.RootDir,
		Labels: o.NodeLabels, Taints: taints, Reserved: o.reserved(), MaxPods: o.MaxPods,
		NodeIP:     net.ParseIP(o.NodeIP),
		Thresholds: thresholds, Pressure: pressure,
		StatusUpdateFrequency: o.NodeStatusUpdateFrequency, StatusReportFrequency: o.NodeStatusReportFrequency,
		LeaseDuration: o.NodeLeaseDurationSeconds,
		APIPort:       o.Port,
		// Renewals that keep failing may be stuck on a dead connection.
		OnRepeatedHeartbeatFailure: closeConnections,
		// What failed during an outage is tried again at once.
		OnAPIServerBack: apiserverBack,
		Readyz:          readyz,
		AgentVersion:    version.Get().GitVersion,
		Logger:          log,
	})
}

// apiObjects are what the pods from the apiserver reference, read once
// connected: their ConfigMaps, Secrets and tokens (objects), the Services
// for their environment variables, the RuntimeClasses for their
// sandboxes' handlers. They exist from the start, as the runtime and the
// volumes are built with them. All nil in standalone mode, where a pod
// naming a RuntimeClass is refused.
type apiObjects struct {
	objects *podobjects.Objects
	// changes carries what objects tells of changes to the agent.
	changes  *podobjects.Changes
	services *serviceenv.Services
	classes  *runtimeclass.Classes
}

func (o *Options) newAPIObjects(reg metrics.KubeRegistry, log logr.Logger) (apiObjects, error) {
	if o.Kubeconfig == "" {
		return apiObjects{}, nil
	}
	mx, err := objectcache.NewMetrics(reg)
	if err != nil {
		return apiObjects{}, fmt.Errorf("registering the object cache metrics: %w", err)
	}
	tm := tokens.NewMetrics()
	if err := tm.Register(reg); err != nil {
		return apiObjects{}, fmt.Errorf("registering the token metrics: %w", err)
	}
	strategy, _ := podobjects.ParseStrategy(o.ObjectChangeDetection) // validated
	objects, err := podobjects.New(podobjects.Options{Strategy: strategy, Metrics: mx, TokenMetrics: tm, Logger: log})
	if err != nil {
		return apiObjects{}, err
	}
	return apiObjects{
		objects:  objects,
		changes:  podobjects.NewChanges(),
		services: serviceenv.New(serviceenv.Options{Logger: log.WithName("services")}),
		classes:  runtimeclass.New(runtimeclass.Options{Logger: log.WithName("runtimeclasses")}),
	}, nil
}

// podObjects reads the pods' objects once connected, with the Node's
// allocatable resources from nd; the agent syncs the pods whose objects
// changed or may be read now (changes).
func (a apiObjects) podObjects(nd *node.Node) connectedPart {
	return func(ctx context.Context, client kubernetes.Interface) error {
		return a.objects.Run(ctx, client, nd.Current, a.changes)
	}
}

// apiServerSource takes the pods bound to the node from the apiserver
// into the merger once connected; a receive on reconnect ends its wait to
// list and watch again after a failure.
func (o *Options) apiServerSource(merger *config.Merger, reconnect <-chan struct{}, log logr.Logger) connectedPart {
	return func(ctx context.Context, client kubernetes.Interface) error {
		source, err := config.NewAPIServerSource(config.APIServerOptions{
			Pods: client.CoreV1().Pods(metav1.NamespaceAll), NodeName: o.NodeName, Logger: log, Sink: merger,
			Reconnect: reconnect,
		})
		if err != nil {
			return err
		}
		return source.Run(ctx)
	}
}

// mirrorSync keeps the mirror pods of the static pods once connected; the
// agent admits the API pods against the Node from now on.
func mirrorSync(api *apisync.Sync, ag *agent.Agent, nd *node.Node) connectedPart {
	return func(ctx context.Context, client kubernetes.Interface) error {
		getter := mirror.NodeGetterFunc(nd.Current)
		ag.Connected(getter)
		return api.RunMirrors(ctx, apisync.Connection{Client: client, Node: getter})
	}
}

// statusSync keeps the pods' statuses once connected.
func statusSync(api *apisync.Sync) connectedPart {
	return func(ctx context.Context, client kubernetes.Interface) error {
		return api.RunStatuses(ctx, apisync.Connection{Client: client})
	}
}
