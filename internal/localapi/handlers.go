package localapi

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/pods", s.listPods)
	mux.HandleFunc("GET /v1/pods/{namespace}/{name}", s.getPod)
	mux.HandleFunc("GET /v1/manifests/errors", s.manifestErrors)
	mux.HandleFunc("GET /v1/healthz", s.healthz)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	return mux
}

func (s *Server) listPods(w http.ResponseWriter, _ *http.Request) {
	infos := s.opts.Provider.Pods()
	out := PodList{Pods: make([]Pod, 0, len(infos))}
	for _, in := range infos {
		out.Pods = append(out.Pods, toPod(in))
	}
	slices.SortFunc(out.Pods, func(a, b Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	writeJSON(w, out)
}

// getPod finds the pod by name. Two pods of one name can exist for a
// moment (an edited static pod: the old one terminating, the new one
// waiting); the one not yet terminated is shown.
func (s *Server) getPod(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	var found *PodInfo
	for _, in := range s.opts.Provider.Pods() {
		if in.Pod == nil || in.Pod.Namespace != ns || in.Pod.Name != name {
			continue
		}
		if found == nil || endRank(in.WorkerPhase) < endRank(found.WorkerPhase) {
			found = &in
		}
	}
	if found == nil {
		writeError(w, http.StatusNotFound, "pod "+ns+"/"+name+" not found")
		return
	}
	out := PodDetail{Pod: toPod(*found), Timeline: s.opts.Provider.Timeline(found.Pod.UID)}
	if out.Timeline == nil {
		out.Timeline = []TimelineEntry{}
	}
	writeJSON(w, out)
}

// endRank orders worker phases by how close the pod is to its end.
func endRank(phase string) int {
	switch phase {
	case "terminating":
		return 1
	case "terminated":
		return 2
	}
	return 0
}

func (s *Server) manifestErrors(w http.ResponseWriter, _ *http.Request) {
	url, httpErr := s.opts.Provider.HTTPError()
	writeJSON(w, toManifestErrors(s.opts.Provider.FileErrors(), url, httpErr))
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	h := Health{Status: "ok", Ready: true, Problems: s.opts.Provider.Problems()}
	if err := s.opts.Provider.Ready(); err != nil {
		h.Ready, h.Error = false, err.Error()
	}
	writeJSON(w, h)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(errorBody{Error: msg})
}
