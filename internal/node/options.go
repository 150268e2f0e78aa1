package node

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// Runtime is what the node asks of the container runtime.
type Runtime interface {
	Health(ctx context.Context) (runtime.Health, error)
	ImageFilesystems(ctx context.Context) ([]string, error)
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
	Taints []v1.Taint
	// Reserved is held back from pods (--system-reserved, --kube-reserved).
	Reserved []v1.ResourceList
	MaxPods  int32
	// NodeIP is the InternalIP to report; nil picks the first global
	// address of an interface that is up.
	NodeIP net.IP
	// Thresholds bound the pressure conditions; PressureTransition is how
	// long a condition stays True after its signal recovers.
	Thresholds         Thresholds
	PressureTransition time.Duration

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

	// AgentVersion is reported as the node's kubelet version.
	AgentVersion string

	Logger logr.Logger
	Clock  clock.WithTicker
}

func (o *Options) defaults() error {
	if o.Name == "" || o.Runtime == nil || o.RootDir == "" {
		return errors.New("node: Options.Name, Runtime and RootDir are required")
	}
	if o.AgentHealth == nil {
		o.AgentHealth = func() error { return nil }
	}
	if o.SourcesReady == nil {
		o.SourcesReady = func() error { return nil }
	}
	if o.MaxPods == 0 {
		o.MaxPods = 110
	}
	if o.Thresholds == nil {
		ts, err := ParseThresholds(DefaultThresholds)
		if err != nil {
			return err
		}
		o.Thresholds = ts
	}
	if o.PressureTransition == 0 {
		o.PressureTransition = 5 * time.Minute
	}
	if o.StatusUpdateFrequency == 0 {
		o.StatusUpdateFrequency = 10 * time.Second
	}
	if o.StatusReportFrequency == 0 {
		o.StatusReportFrequency = 5 * time.Minute
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 40
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return nil
}
