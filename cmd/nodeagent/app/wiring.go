package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/cgroups"
	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/images"
	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/runtimeclass"
	"github.com/nodeagent/nodeagent/internal/serviceenv"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Run builds every part of the agent, in the order they depend on
// each other, and runs them under one errgroup until ctx ends or a part
// fails. Returning stops the agent, never the pods.
//
//	runtime (CRI) -> volumes -> merger <- file source, HTTP source
//	                               |   <- checkpoint (restored pods, before the sources run)
//	                             agent -> local API (unix socket), /metrics /healthz /readyz
//	                               |
//	                             checkpoint (bbolt, <root-dir>/checkpoint.db)
func Run(ctx context.Context, o *Options, log logr.Logger) error {
	setGCPercent(o.GCPercent, log)
	for _, dir := range []string{o.RootDir, o.PodLogDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}

	// One registry for every part; nothing registers globally.
	reg := metrics.NewKubeRegistry()
	reg.RawMustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())

	// In connected mode, what the pods from the apiserver reference: read
	// once the node's identity is loaded.
	objects, err := o.podObjects(reg, log)
	if err != nil {
		return err
	}

	// The machine's memory sets the OOM score adjustment of Burstable
	// containers.
	machine, err := node.ReadMachine()
	if err != nil {
		return err
	}
	// The pods' cgroups by QoS class, made before any pod starts.
	cg, err := cgroups.New(cgroups.Options{Root: o.CgroupRoot, Driver: cgroups.Driver(o.CgroupDriver), Logger: log})
	if err != nil {
		return fmt.Errorf("--cgroup-driver=%s: %w", o.CgroupDriver, err)
	}
	if err := cg.Setup(); err != nil {
		return fmt.Errorf("setting up the QoS cgroups under %s: %w", o.CgroupRoot, err)
	}
	// The container runtime: nothing runs without it, so it is checked first.
	rtOpts := runtime.Options{
		Endpoint:       o.CRIEndpoint,
		RequestTimeout: o.RuntimeRequestTimeout,
		LogRoot:        o.PodLogDir,
		PodsDir:        filepath.Join(o.RootDir, "pods"),
		Cgroups:        cg,
		MemoryCapacity: machine.MemoryBytes,
		// Always pulls at each start unless the node runs offline-first.
		ImagePullAlwaysIfAbsent: o.ImagePullAlwaysIfAbsent,
		// The node's registry credentials, where the kubelet looks.
		NodeDockerConfigPaths: images.NodeDockerConfigPaths(o.RootDir),
		// Localhost seccomp profiles, where the kubelet keeps them.
		SeccompProfileRoot: filepath.Join(o.RootDir, "seccomp"),
		HostIPs:            nodeIPs(o.NodeIP),
		ClusterDNS:         o.ClusterDNS,
		ClusterDomain:      o.ClusterDomain,
		ResolvConf:         o.ResolvConf,
		Logger:             log,
	}
	volOpts := volumes.Options{RootDir: o.RootDir, Logger: log}
	if objects != nil { // never a nil *Objects in an interface
		rtOpts.Sources, rtOpts.Allocatable = objects, objects.Allocatable
		volOpts.Sources, volOpts.Allocatable = objects, objects.Allocatable
	}
	// In connected mode, the pods' service environment variables, from an
	// informer on Services that connected starts.
	// And the handlers of the RuntimeClasses pods name, from an informer
	// on RuntimeClasses; standalone, a pod naming one is refused.
	var services *serviceenv.Services
	var classes *runtimeclass.Classes
	if o.Kubeconfig != "" {
		services = serviceenv.New(serviceenv.Options{Logger: log.WithName("services")})
		rtOpts.Services = services
		classes = runtimeclass.New(runtimeclass.Options{Logger: log.WithName("runtimeclasses")})
		rtOpts.RuntimeClasses = classes
	}
	rt, err := runtime.New(ctx, rtOpts)
	if errors.Is(err, runtime.ErrRuntimeUnavailable) {
		return fmt.Errorf("%w (is containerd running? set --cri-endpoint)", err)
	} else if err != nil {
		return err
	}
	defer rt.Close()

	vols, err := volumes.New(volOpts)
	if err != nil {
		return err
	}

	configMetrics, err := config.NewMetrics(reg)
	if err != nil {
		return fmt.Errorf("registering the config metrics: %w", err)
	}

	// In connected mode, events go to the apiserver: queued from the
	// start, sent once the node's identity is loaded.
	var ev *events
	if o.Kubeconfig != "" {
		ev = newEvents(ctx, o.NodeName)
		defer ev.shutdown()
	}

	// The pod sources, merged into one stream for the agent; they are
	// built once the checkpoint has been restored.
	merger := config.NewMerger(config.MergerOptions{Mode: config.Incremental, Logger: log, Metrics: configMetrics,
		Recorder: ev.recorder(), NodeName: o.NodeName})
	var sources []podtypes.Source
	if o.ManifestDir != "" {
		sources = append(sources, podtypes.FileSource)
	}
	if o.ManifestURL != "" {
		sources = append(sources, podtypes.HTTPSource)
	}
	// In connected mode the apiserver is a source too (of mirror pods, for
	// now): its pods are awaited before mirrors without a static pod are
	// taken for orphans. The static sources never wait for it.
	readySources := sources
	if ev != nil {
		readySources = append(slices.Clone(sources), podtypes.APIServerSource)
	}
	sourcesReady := func() bool { return merger.SeenAllSources(readySources...) }

	// The checkpoint: what the agent remembers of its static pods across
	// restarts. An unreadable file has been moved aside (Open logs it) and
	// the agent starts from its sources; a newer agent's file is refused,
	// and so is starting, rather than lose that agent's state.
	var store checkpoint.Store
	if o.CheckpointFile != "none" {
		bolt, err := checkpoint.Open(o.CheckpointFile, checkpoint.Options{Logger: log.WithName("checkpoint")})
		if err != nil {
			if errors.Is(err, checkpoint.ErrNewerSchema) {
				// Nothing was written and no pod touched: say so, and
				// give the operator both ways out.
				return fmt.Errorf("refusing to start: %w; the file and the running pods are left as they are (run the newer nodeagent that wrote it, or move the file aside, keeping it for that version, to start from the sources alone and adopt what runs)", err)
			}
			return fmt.Errorf("opening the checkpoint: %w", err)
		}
		defer bolt.Close()
		store = bolt
	}

	// The sysctls pods may set: the safe ones this kernel namespaces, and
	// those the administrator allowed (validated).
	kernel, err := admission.KernelVersion()
	if err != nil {
		log.Error(err, "The sysctls only some kernels namespace are not taken for safe")
	}
	sysctls, err := admission.NewSysctls(o.AllowedUnsafeSysctls, kernel)
	if err != nil {
		return fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}

	agentOpts := agent.Options{
		NodeName:             o.NodeName,
		NodeIPs:              nodeIPs(o.NodeIP),
		RootDir:              o.RootDir,
		Runtime:              rt,
		Volumes:              vols,
		Updates:              merger.Updates(),
		SourcesReady:         sourcesReady,
		Checkpoint:           store,
		Connected:            ev != nil,
		MirrorsSeen:          func() bool { return merger.SeenAllSources(podtypes.APIServerSource) },
		Recorder:             ev.recorder(),
		SyncFrequency:        o.SyncFrequency,
		RelistInterval:       o.RelistInterval,
		HousekeepingInterval: o.HousekeepingInterval,
		Sysctls:              sysctls,
		Registry:             reg,
		Logger:               log,
		Clock:                clock.RealClock{},
	}
	if objects != nil {
		agentOpts.Objects = objects
	}
	ag, err := agent.New(agentOpts)
	if err != nil {
		return err
	}
	// Before any source runs: the checkpointed pods are desired until
	// their sources answer.
	restored, err := ag.Restore(ctx, merger, sources)
	if err != nil {
		return err
	}
	var fileSource *config.FileSource
	if o.ManifestDir != "" {
		fileSource, err = config.NewFileSource(config.FileOptions{
			Path: o.ManifestDir, NodeName: o.NodeName, Sink: merger, Holders: restored.Holders, Recorder: ev.recorder(),
			ResyncInterval: o.FileCheckFrequency, Logger: log, Metrics: configMetrics,
		})
		if err != nil {
			return err
		}
	}
	var httpSource *config.HTTPSource
	if o.ManifestURL != "" {
		header, err := o.urlHeader()
		if err != nil {
			return err
		}
		httpSource, err = config.NewHTTPSource(config.HTTPOptions{
			URL: o.ManifestURL, Header: header, NodeName: o.NodeName, Sink: merger, Recorder: ev.recorder(),
			Interval: o.HTTPCheckFrequency, Logger: log, Metrics: configMetrics,
		})
		if err != nil {
			return err
		}
	}
	sourcesErr := sourcesError(sourcesReady, readySources)
	ready := readiness(ag, sourcesErr)

	api, err := localapi.New(localapi.Options{
		SocketPath: o.LocalAPISocket,
		Provider:   newAPIProvider(ag, fileSource, httpSource, o, ready),
		Logger:     log,
	})
	if err != nil {
		return err
	}

	var serve *serving
	if o.ServeAddress != "" {
		if serve, err = newServing(o.ServeAddress, reg, ready, o.Profiling, log); err != nil {
			return err
		}
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return ag.Run(gctx) })
	if fileSource != nil {
		g.Go(func() error { return fileSource.Run(gctx) })
	}
	if httpSource != nil {
		g.Go(func() error { return httpSource.Run(gctx) })
	}
	g.Go(func() error { return api.Run(gctx) })
	if o.Kubeconfig != "" {
		g.Go(func() error {
			return o.connected(gctx, connectedParts{rt: rt, agent: ag, merger: merger, events: ev, sourcesErr: sourcesErr, reg: reg, objects: objects, services: services, classes: classes}, log)
		})
	}
	if serve != nil {
		g.Go(func() error { return serve.Run(gctx) })
	}
	g.Go(func() error {
		releaseStartPages(gctx, ready, log)
		return nil
	})
	log.Info("nodeagent started", "node", o.NodeName, "runtime", rt.Version().RuntimeName+" "+rt.Version().RuntimeVersion,
		"manifestDir", o.ManifestDir, "connected", o.Kubeconfig != "", "manifestURL", config.RedactURL(o.ManifestURL), "localAPI", o.LocalAPISocket, "serveAddress", o.ServeAddress)
	return g.Wait()
}

// readiness is ready once every configured source has sent its pods and
// the agent says it is ready.
func readiness(ag *agent.Agent, sourcesErr func() error) func() error {
	return func() error {
		if err := sourcesErr(); err != nil {
			return err
		}
		return ag.Ready()
	}
}

// sourcesError says which sources have not sent their first pods yet.
func sourcesError(sourcesReady func() bool, sources []podtypes.Source) func() error {
	return func() error {
		if !sourcesReady() {
			return fmt.Errorf("waiting for the first pods of the sources %v", sources)
		}
		return nil
	}
}

// nodeIPs are the node's IPs for the pods' statuses: --node-ip, or the
// address the Node reports as its InternalIP.
func nodeIPs(configured string) []string {
	if ip := node.InternalIP(net.ParseIP(configured)); ip != nil {
		return []string{ip.String()}
	}
	return nil
}
