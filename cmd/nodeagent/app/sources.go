package app

import (
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// podSources are the pod sources, merged into one stream for the agent.
// The merger exists first; the file and HTTP sources are built by
// buildStatic once the checkpoint has been restored, so that the restored
// pods are desired before any source answers; the apiserver source runs
// once connected (apiServerSource).
type podSources struct {
	merger  *config.Merger
	metrics *config.Metrics
	// static are the sources on the node (file, HTTP). awaited adds, in
	// connected mode, the apiserver (a source of mirror pods, for now):
	// its pods are awaited before mirrors without a static pod are taken
	// for orphans. The static sources never wait for it.
	static, awaited []podtypes.Source

	file *config.FileSource // nil without --manifest-dir
	http *config.HTTPSource // nil without --manifest-url
}

func (o *Options) newPodSources(reg metrics.KubeRegistry, ev *events, connected bool, log logr.Logger) (*podSources, error) {
	mx, err := config.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("registering the config metrics: %w", err)
	}
	s := &podSources{
		merger: config.NewMerger(config.MergerOptions{Mode: config.Incremental, Logger: log, Metrics: mx,
			Recorder: ev.recorder(), NodeName: o.NodeName}),
		metrics: mx,
	}
	if o.ManifestDir != "" {
		s.static = append(s.static, podtypes.FileSource)
	}
	if o.ManifestURL != "" {
		s.static = append(s.static, podtypes.HTTPSource)
	}
	s.awaited = s.static
	if connected {
		s.awaited = append(slices.Clone(s.static), podtypes.APIServerSource)
	}
	return s, nil
}

// buildStatic builds the file and HTTP sources; holders are the files
// that held the restored pods.
func (s *podSources) buildStatic(o *Options, holders map[string]string, ev *events, log logr.Logger) error {
	var err error
	if o.ManifestDir != "" {
		s.file, err = config.NewFileSource(config.FileOptions{
			Path: o.ManifestDir, NodeName: o.NodeName, Sink: s.merger, Holders: holders, Recorder: ev.recorder(),
			ResyncInterval: o.FileCheckFrequency, Logger: log, Metrics: s.metrics,
		})
		if err != nil {
			return err
		}
	}
	if o.ManifestURL != "" {
		header, err := o.urlHeader()
		if err != nil {
			return err
		}
		s.http, err = config.NewHTTPSource(config.HTTPOptions{
			URL: o.ManifestURL, Header: header, NodeName: o.NodeName, Sink: s.merger, Recorder: ev.recorder(),
			Interval: o.HTTPCheckFrequency, Logger: log, Metrics: s.metrics,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// runs are the Runs of the static sources built.
func (s *podSources) runs() parts {
	var runs parts
	if s.file != nil {
		runs = append(runs, part{"file source", s.file.Run})
	}
	if s.http != nil {
		runs = append(runs, part{"HTTP source", s.http.Run})
	}
	return runs
}

// ready says whether every awaited source has sent its first pods.
func (s *podSources) ready() bool { return s.merger.SeenAllSources(s.awaited...) }

// mirrorsSeen says whether the apiserver has sent its first pods.
func (s *podSources) mirrorsSeen() bool { return s.merger.SeenAllSources(podtypes.APIServerSource) }

// err says which sources have not sent their first pods yet.
func (s *podSources) err() error {
	if !s.ready() {
		return fmt.Errorf("waiting for the first pods of the sources %v", s.awaited)
	}
	return nil
}
