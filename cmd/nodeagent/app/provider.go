package app

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/config"
)

// agentQueries is what the local API asks the agent.
type agentQueries interface {
	Pods() []agent.PodInfo
	Timeline(types.UID) []timeline.Entry
	Problems() []string
}

// apiProvider shows the agent and the config sources to the local API.
type apiProvider struct {
	agent agentQueries
	file  *config.FileSource // nil without --manifest-dir
	http  *config.HTTPSource // nil without --manifest-url
	url   string             // redacted
	ready func() error
}

var _ localapi.Provider = (*apiProvider)(nil)

// newLocalAPI builds the local API (a unix socket): the agent's pods and
// the sources' errors, for manifestctl.
func (o *Options) newLocalAPI(ag *agent.Agent, sources *podSources, ready func() error, log logr.Logger) (*localapi.Server, error) {
	return localapi.New(localapi.Options{
		SocketPath: o.LocalAPISocket,
		Provider:   newAPIProvider(ag, sources.file, sources.http, o, ready),
		Logger:     log,
	})
}

func newAPIProvider(ag agentQueries, file *config.FileSource, http *config.HTTPSource, o *Options, ready func() error) *apiProvider {
	return &apiProvider{agent: ag, file: file, http: http, url: config.RedactURL(o.ManifestURL), ready: ready}
}

func (p *apiProvider) Pods() []localapi.PodInfo {
	pods := p.agent.Pods()
	out := make([]localapi.PodInfo, 0, len(pods))
	for _, in := range pods {
		info := localapi.PodInfo{
			Pod:         in.Pod,
			Status:      in.Status,
			WorkerPhase: in.WorkerPhase,
			Source:      string(in.Source),
			ConfigHash:  in.ConfigHash,
			Origin:      in.Origin,
			Restored:    in.Restored,
			Adopted:     in.Adopted,
		}
		if len(in.Processes) > 0 {
			info.Processes = make(map[string]string, len(in.Processes))
			for id, ps := range in.Processes {
				info.Processes[id] = string(ps)
			}
		}
		if m := in.Mirror; m != nil {
			info.Mirror = &localapi.Mirror{UID: string(m.UID), Synced: m.Synced, StatusSynced: m.StatusSynced, Problem: m.Problem}
		}
		out = append(out, info)
	}
	return out
}

func (p *apiProvider) Timeline(uid types.UID) []localapi.TimelineEntry {
	entries := p.agent.Timeline(uid)
	out := make([]localapi.TimelineEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, localapi.TimelineEntry{Time: e.Time, Kind: e.Kind, Message: e.Message})
	}
	return out
}

func (p *apiProvider) FileErrors() map[string]error {
	if p.file == nil {
		return nil
	}
	return p.file.Errors()
}

func (p *apiProvider) HTTPError() (string, error) {
	if p.http == nil {
		return "", nil
	}
	return p.url, p.http.Err()
}

func (p *apiProvider) Ready() error { return p.ready() }

func (p *apiProvider) Problems() []string { return p.agent.Problems() }
