package app

import (
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/imagegc"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/staging/config"
)

// Run builds every part of the agent, in the order they depend on each
// other, and runs the long-running ones under one errgroup until ctx ends
// or one fails. Returning stops the agent, never the pods. doc.go draws
// the parts and how they connect, in both modes.
func Run(ctx context.Context, o *Options, log logr.Logger) error {
	reg, err := o.setUp(log)
	if err != nil {
		return err
	}
	conn := newConnection(o, reg, log) // nil in standalone mode
	from, err := o.newAPIObjects(reg, log)
	if err != nil {
		return err
	}
	// Read once: the runtime and the Node both need it.
	machine, err := node.ReadMachine()
	if err != nil {
		return err
	}
	cg, err := o.newCgroups(log)
	if err != nil {
		return err
	}
	rt, err := o.newRuntime(ctx, cg, from, machine, log)
	if err != nil {
		return err
	}
	defer rt.Close()
	vols, err := o.newVolumes(from, log)
	if err != nil {
		return err
	}
	rotator, err := o.newLogRotation(rt, log)
	if err != nil {
		return err
	}
	ev := newEvents(ctx, o.NodeName, conn)
	defer ev.shutdown()
	imageGC, err := imagegc.New(o.imageGCOptions(rt, ev.recorder(), reg, log))
	if err != nil {
		return err
	}
	sources, err := o.newPodSources(reg, ev, conn != nil, log)
	if err != nil {
		return err
	}
	store, err := o.openCheckpoint(log)
	if err != nil {
		return err
	}
	if store != nil {
		defer store.Close() // after the agent has ended: it writes on its way out
	}
	ag, err := o.newAgent(agentParts{rt: rt, vols: vols, sources: sources, store: store, events: ev, from: from, reg: reg}, log)
	if err != nil {
		return err
	}
	// Before any source runs: the checkpointed pods are desired until
	// their sources answer.
	restored, err := ag.Restore(ctx, sources.merger, sources.static)
	if err != nil {
		return err
	}
	if err := sources.buildStatic(o, restored.Holders, ev, log); err != nil {
		return err
	}
	evictions, err := o.newEviction(evictionParts{rt: rt, cgroups: cg, vols: vols, agent: ag, imageGC: imageGC, machine: machine, reserved: o.reserved(), reg: reg}, log)
	if err != nil {
		return err
	}
	ready := readiness(ag, sources)
	api, err := o.newLocalAPI(ag, sources, ready, log)
	if err != nil {
		return err
	}

	parts := parts{ag.Run, api.Run, rotator.Run, imageGC.Run, evictions.Run, startPages{ready: ready, log: log}.Run}
	parts = append(parts, sources.runs()...)
	if o.ServeAddress != "" {
		serve, err := newServing(o.ServeAddress, reg, ready, o.Profiling, log)
		if err != nil {
			return err
		}
		parts = append(parts, serve.Run)
	}
	if conn != nil {
		nd, err := o.newNode(rt, machine, ag.Ready, sources.err, evictions.Met, conn.closeConnections, log)
		if err != nil {
			return err
		}
		parts = append(parts, conn.Run,
			conn.whenConnected(nd.Run),
			conn.whenConnected(o.nodeAPI(rt, ag, log)),
			conn.whenConnected(from.podObjects(nd, ag)),
			conn.whenConnected(from.services.Run),
			conn.whenConnected(from.classes.Run),
			conn.whenConnected(o.apiServerSource(sources.merger, log)),
			conn.whenConnected(apiSync(ag, nd)),
		)
	}
	log.Info("nodeagent started", "node", o.NodeName, "runtime", rt.Version().RuntimeName+" "+rt.Version().RuntimeVersion,
		"manifestDir", o.ManifestDir, "connected", conn != nil, "manifestURL", config.RedactURL(o.ManifestURL), "localAPI", o.LocalAPISocket, "serveAddress", o.ServeAddress)
	return parts.run(ctx)
}

// setUp paces the garbage collector, makes the agent's directories and
// the one metrics registry every part registers with; nothing registers
// globally.
func (o *Options) setUp(log logr.Logger) (metrics.KubeRegistry, error) {
	setGCPercent(o.GCPercent, log)
	for _, dir := range []string{o.RootDir, o.PodLogDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	reg := metrics.NewKubeRegistry()
	reg.RawMustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return reg, nil
}

// parts are the long-running parts of the agent, each a Run that returns
// when ctx ends. They run under one errgroup: the first to fail ends the
// others.
type parts []func(context.Context) error

func (p parts) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range p {
		g.Go(func() error { return run(gctx) })
	}
	return g.Wait()
}
