package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/imagegc"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/staging/config"
)

// Run builds every part of the agent, in the order they depend on each
// other, and runs the long-running ones under one errgroup until ctx ends
// or one fails. Returning stops the agent, never the pods. doc.go draws
// the parts and how they connect, in both modes.
func Run(ctx context.Context, o *Options, log logr.Logger) error {
	reg, probes, err := o.setUp(log)
	if err != nil {
		return err
	}
	conn := newConnection(o, reg, log) // nil in standalone mode
	from, err := o.newAPIObjects(reg, log)
	if err != nil {
		return err
	}
	// Read once: the runtime, the agent (the node's labels) and the Node need it.
	machine, err := node.ReadMachine()
	if err != nil {
		return err
	}
	cg, err := o.newCgroups(reg, log)
	if err != nil {
		return err
	}
	// What the API pods were allocated and resized to, for the runtime
	// and the agent.
	alloc, err := allocation.Open(filepath.Join(o.RootDir, "allocated-resources.json"))
	if err != nil {
		return err
	}
	rt, err := o.newRuntime(ctx, cg, alloc, from, machine, reg, log)
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
	imageGC, err := imagegc.New(o.imageGCOptions(rt, ev.recorder(), reg, prunePullRecords(rt, log), log))
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
	runs, err := o.newAgent(agentParts{rt: rt, alloc: alloc, vols: vols, sources: sources, store: store, events: ev, from: from, machine: machine, reg: reg, probes: probes}, log)
	if err != nil {
		return err
	}
	// Before any source runs: the checkpointed pods are desired until
	// their sources answer.
	ag := runs.agent
	restored, err := ag.Restore(ctx, sources.merger, sources.static)
	if err != nil {
		return err
	}
	if err := sources.buildStatic(o, restored.Holders, ev, log); err != nil {
		return err
	}
	evictions, err := o.newEviction(evictionParts{rt: rt, cgroups: cg, vols: vols, agent: ag, gc: runs.gc, imageGC: imageGC, machine: machine, reg: reg}, log)
	if err != nil {
		return err
	}
	ready := readiness(ag, sources)
	api, err := o.newLocalAPI(ag, sources, ready, log)
	if err != nil {
		return err
	}

	parts := append(runs.parts(), parts{
		{"local API", api.Run}, {"log rotation", rotator.Run}, {"image GC", imageGC.Run},
		{"eviction", evictions.Run}, {"start pages", startPages{ready: ready, log: log}.Run},
	}...)
	parts = append(parts, sources.runs()...)
	if o.ServeAddress != "" {
		serve, err := newServing(o.ServeAddress, localMetrics(reg, probes), ready, healthChecks(ag), o.Profiling, log)
		if err != nil {
			return err
		}
		parts = append(parts, part{"serving", serve.Run})
	}
	if conn != nil {
		// When the Node finds the apiserver answering again after an
		// outage, API sync and the apiserver source try at once what
		// they would otherwise retry after their back-off.
		reconnect := make(chan struct{}, 1)
		back := func() {
			runs.api.Retry()
			select {
			case reconnect <- struct{}{}:
			default:
			}
		}
		nd, err := o.newNode(rt, machine, ag, sources.err, evictions.Pressure, conn.closeConnections, back, conn.readyz, log)
		if err != nil {
			return err
		}
		parts = append(parts, part{"connection", conn.Run},
			part{"node", conn.whenConnected(nd.Run)},
			part{"node API", conn.whenConnected(o.nodeAPI(nodeAPIParts{rt: rt, agent: ag, vols: vols, reg: reg, probes: probes, conn: conn, node: nd}, log))},
			part{"pod objects", conn.whenConnected(from.podObjects(nd))},
			part{"services", conn.whenConnected(from.services.Run)},
			part{"runtime classes", conn.whenConnected(from.classes.Run)},
			part{"apiserver source", conn.whenConnected(o.apiServerSource(sources.merger, reconnect, log))},
			part{"mirror pods", conn.whenConnected(mirrorSync(runs.api, ag, nd))},
			part{"pod statuses", conn.whenConnected(statusSync(runs.api))},
		)
	}
	log.Info("nodeagent started", "node", o.NodeName, "runtime", rt.Version().RuntimeName+" "+rt.Version().RuntimeVersion,
		"manifestDir", o.ManifestDir, "connected", conn != nil, "manifestURL", config.RedactURL(o.ManifestURL), "localAPI", o.LocalAPISocket, "serveAddress", o.ServeAddress)
	// The checkpoint's writer outlives the other parts by one last write,
	// so that what they changed on their way out is written too.
	return parts.run(ctx, stopGrace, log, part{"checkpoint writer", runs.keeper.Run})
}

// setUp paces the garbage collector, makes the agent's directories and
// the metrics registries: the one every part registers with, and the
// prober's, which the node API serves apart (/metrics/probes) as the
// kubelet does; nothing registers globally.
func (o *Options) setUp(log logr.Logger) (reg, probes metrics.KubeRegistry, err error) {
	setGCPercent(o.GCPercent, log)
	for _, dir := range []string{o.RootDir, o.PodLogDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, nil, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	reg = metrics.NewKubeRegistry()
	reg.RawMustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	probes = metrics.NewKubeRegistry()
	if err := metrics.RegisterProcessStartTime(probes.Register); err != nil {
		return nil, nil, fmt.Errorf("the prober's metrics: %w", err)
	}
	return reg, probes, nil
}
