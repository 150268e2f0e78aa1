package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/eviction"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// Runtime is what the node asks of the container runtime.
type Runtime interface {
	Health(ctx context.Context) (runtime.Health, error)
	Version() runtime.VersionInfo
}

// Options configure a Node.
type Options struct {
	// Name is the Node's name; the client Run is given acts as
	// system:node:<Name>.
	Name string

	Runtime Runtime
	// AgentHealth and SourcesReady say why the agent cannot run pods right
	// now (its relist of the runtime stalled; a pod source has not sent
	// its pods yet), nil when it can. Either makes the node not Ready.
	AgentHealth, SourcesReady func() error

	Machine Machine
	// RootDir is on the node filesystem whose space is ephemeral-storage.
	RootDir string
	// Labels and Taints are set at registration, besides the labels
	// every node carries (hostname, os, arch).
	Labels map[string]string
	Taints []corev1.Taint
	// Reserved is held back from pods (--system-reserved, --kube-reserved).
	Reserved []corev1.ResourceList
	MaxPods  int32
	// NodeIP is the InternalIP to report; nil picks the first global
	// address of an interface that is up.
	NodeIP net.IP
	// Thresholds are the hard eviction thresholds, which come off
	// allocatable. Pressure returns the signals under pressure
	// (eviction.Manager.Pressure), reported as the pressure conditions;
	// nil reports none.
	Thresholds eviction.Thresholds
	Pressure   func() map[string]bool

	// StatusUpdateFrequency is how often the status is computed, and the
	// most often it is written; StatusReportFrequency the longest it goes
	// unwritten (a heartbeat for readers that do not look at the Lease).
	StatusUpdateFrequency, StatusReportFrequency time.Duration
	// LeaseDuration is the Lease's duration in seconds; it is renewed every
	// quarter of it.
	LeaseDuration int32

	// APIPort is the port of the node API (internal/nodeapi) the Node
	// reports in status.daemonEndpoints; 0 when it is not served.
	APIPort int32

	// OnRepeatedHeartbeatFailure, if not nil, is called when the Lease
	// fails to renew several times in a row: the client's connections may
	// be to an apiserver that went away without closing them, and closing
	// them makes the next request dial afresh (as the kubelet does).
	OnRepeatedHeartbeatFailure func()
	// OnAPIServerBack, if not nil, is called when the apiserver answers
	// the Node's watch again after it did not (and at each relist): what
	// waits to be retried may be tried now.
	OnAPIServerBack func()
	// Readyz, if not nil, asks the apiserver's /readyz and says whether it
	// is ok: it is asked every 250 ms while the apiserver is away, so that
	// its return is known at once (reach.go).
	Readyz func(context.Context) bool
	// AgentVersion is reported as the node's kubelet version.
	AgentVersion string

	Logger logr.Logger
	Clock  clock.WithTicker
}

// The defaults of Options, as the kubelet's.
const (
	DefaultMaxPods               = 110
	DefaultStatusUpdateFrequency = 10 * time.Second
	DefaultStatusReportFrequency = 5 * time.Minute
	DefaultLeaseDuration         = 40
)

// ErrInvalidOptions is returned by New for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid node options")

// defaults reports every missing option at once, each wrapping
// ErrInvalidOptions and naming the field, else fills in the defaults.
func (o *Options) defaults() error {
	var errs []error
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"Name", o.Name == ""}, {"Runtime", o.Runtime == nil}, {"RootDir", o.RootDir == ""},
	} {
		if f.missing {
			errs = append(errs, fmt.Errorf("%w: %s is required", ErrInvalidOptions, f.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.AgentHealth == nil {
		o.AgentHealth = func() error { return nil }
	}
	if o.SourcesReady == nil {
		o.SourcesReady = func() error { return nil }
	}
	if o.MaxPods == 0 {
		o.MaxPods = DefaultMaxPods
	}
	if o.Thresholds == nil {
		ts, err := eviction.ParseThresholds(eviction.DefaultThresholds)
		if err != nil {
			return err
		}
		o.Thresholds = ts
	}
	if o.StatusUpdateFrequency == 0 {
		o.StatusUpdateFrequency = DefaultStatusUpdateFrequency
	}
	if o.StatusReportFrequency == 0 {
		o.StatusReportFrequency = DefaultStatusReportFrequency
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return nil
}
