package app

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/volumes"
)

// openCheckpoint opens what the agent remembers of its static pods across
// restarts; nil with --checkpoint-file=none. An unreadable file has been
// moved aside (Open logs it) and the agent starts from its sources; a
// newer agent's file is refused, and so is starting, rather than lose
// that agent's state.
func (o *Options) openCheckpoint(log logr.Logger) (checkpoint.Store, error) {
	if o.CheckpointFile == "none" {
		return nil, nil
	}
	bolt, err := checkpoint.Open(o.CheckpointFile, checkpoint.Options{Logger: log.WithName("checkpoint")})
	if errors.Is(err, checkpoint.ErrNewerSchema) {
		// Nothing was written and no pod touched: say so, and give the
		// operator both ways out.
		return nil, fmt.Errorf("refusing to start: %w; the file and the running pods are left as they are (run the newer nodeagent that wrote it, or move the file aside, keeping it for that version, to start from the sources alone and adopt what runs)", err)
	} else if err != nil {
		return nil, fmt.Errorf("opening the checkpoint: %w", err)
	}
	return bolt, nil
}

// agentParts are what the agent is built from.
type agentParts struct {
	rt      *runtime.Runtime
	alloc   *allocation.Store
	vols    *volumes.Manager
	sources *podSources
	store   checkpoint.Store // nil: none
	events  *events          // nil: standalone mode
	from    apiObjects
	machine node.Machine
	reg     metrics.KubeRegistry
	probes  metrics.KubeRegistry
}

// newAgent builds the agent, which syncs the pods of the sources on the
// runtime.
func (o *Options) newAgent(p agentParts, log logr.Logger) (*agent.Agent, error) {
	// The sysctls pods may set: the safe ones this kernel namespaces, and
	// those the administrator allowed (validated).
	kernel, err := admission.KernelVersion()
	if err != nil {
		log.Error(err, "The sysctls only some kernels namespace are not taken for safe")
	}
	sysctls, err := admission.NewSysctls(o.AllowedUnsafeSysctls, kernel)
	if err != nil {
		return nil, fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}
	opts := agent.Options{
		NodeName:             o.NodeName,
		NodeIPs:              nodeIPs(o.NodeIP),
		RootDir:              o.RootDir,
		Runtime:              p.rt,
		Volumes:              p.vols,
		Updates:              p.sources.merger.Updates(),
		SourcesReady:         p.sources.ready,
		Checkpoint:           p.store,
		Allocation:           p.alloc,
		Connected:            p.events != nil,
		MirrorsSeen:          p.sources.mirrorsSeen,
		Recorder:             p.events.recorder(),
		SyncFrequency:        o.SyncFrequency,
		RelistInterval:       o.RelistInterval,
		HousekeepingInterval: o.HousekeepingInterval,
		Sysctls:              sysctls,
		NodeLabels:           node.Labels(o.NodeName, p.machine, o.NodeLabels),
		Registry:             p.reg,
		ProbeRegistry:        p.probes,
		Logger:               log,
		Clock:                clock.RealClock{},
	}
	if p.from.objects != nil { // never a nil *Objects in an interface
		opts.Objects = p.from.objects
	}
	return agent.New(opts)
}

// readiness is ready once every awaited source has sent its pods and the
// agent says it is ready.
func readiness(ag *agent.Agent, sources *podSources) func() error {
	return func() error {
		if err := sources.err(); err != nil {
			return err
		}
		return ag.Ready()
	}
}
