package nodeapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cri-client/pkg/logs"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// serveContainerLogs writes a container's log, as kubectl logs asks
// for it through the apiserver's pods/log.
func (s *Server) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	q, err := parseLogQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	namespace, name, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	pod, ok := s.findPod(namespace, name, "")
	if !ok {
		http.Error(w, fmt.Sprintf("pod %s/%s does not exist", namespace, name), http.StatusNotFound)
		return
	}
	if !hasContainer(pod, container) {
		http.Error(w, fmt.Sprintf("container %s is not in pod %s/%s", container, namespace, name), http.StatusNotFound)
		return
	}
	id, err := s.logContainer(r, pod, container, q.previous)
	read := func(stdout, stderr io.Writer) error {
		return s.opts.Runtime.ReadLogs(r.Context(), id, &q.opts, stdout, stderr)
	}
	if errors.As(err, new(noInstance)) {
		// A finished pod's containers are removed, its logs kept: the
		// kubelet serves them until the pod is deleted, and so do we.
		read = func(stdout, stderr io.Writer) error {
			return s.opts.Runtime.ReadRemovedLogs(r.Context(), pod, container, q.previous, &q.opts, stdout, stderr)
		}
		none := int64(0) // whether there is such a log, not its content
		if s.opts.Runtime.ReadRemovedLogs(r.Context(), pod, container, q.previous, &logs.LogOptions{LimitBytes: &none}, io.Discard, io.Discard) == nil {
			err = nil
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out := &lazyWriter{w: w}
	stdout, stderr := io.Writer(out), io.Writer(out)
	switch q.stream {
	case corev1.LogStreamStdout:
		stderr = io.Discard
	case corev1.LogStreamStderr:
		stdout = io.Discard
	}
	if err := read(stdout, stderr); err != nil && !out.started && r.Context().Err() == nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out.start() // an empty log is a 200 too
}

// noInstance: the runtime holds no instance of the container asked for.
type noInstance string

func (e noInstance) Error() string { return string(e) }

// logContainer is the runtime ID of the container's current instance, or
// of the one before it.
func (s *Server) logContainer(r *http.Request, pod *corev1.Pod, container string, previous bool) (string, error) {
	st, err := s.opts.Runtime.GetPodStatus(r.Context(), pod.UID)
	if err != nil {
		return "", err
	}
	var instances []runtime.ContainerStatus // newest first
	for _, c := range st.Containers {
		if c.Name == container {
			instances = append(instances, c)
		}
	}
	switch {
	case previous && len(instances) < 2:
		return "", noInstance(fmt.Sprintf("previous terminated container %q in pod %q not found", container, pod.Name))
	case previous:
		return instances[1].ID, nil
	case len(instances) == 0:
		return "", noInstance(fmt.Sprintf("container %q in pod %q is waiting to start", container, pod.Name))
	}
	return instances[0].ID, nil
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// logQuery is a pods/log request's parameters.
type logQuery struct {
	opts     logs.LogOptions
	previous bool
	stream   string
}

// parseLogQuery reads PodLogOptions' query parameters and checks them as
// the apiserver's validation does.
func parseLogQuery(v url.Values) (logQuery, error) {
	var q logQuery
	var errs []error
	flag := func(key string) bool {
		b, err := strconv.ParseBool(v.Get(key))
		if v.Get(key) != "" && err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: not a boolean", key, v.Get(key)))
		}
		return b
	}
	number := func(key string, least int64) *int64 {
		if v.Get(key) == "" {
			return nil
		}
		n, err := strconv.ParseInt(v.Get(key), 10, 64)
		if err != nil || n < least {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer of at least %d", key, v.Get(key), least))
			return nil
		}
		return &n
	}
	q.opts.Follow, q.opts.Timestamp, q.previous = flag("follow"), flag("timestamps"), flag("previous")
	q.opts.TailLines, q.opts.LimitBytes = number("tailLines", 0), number("limitBytes", 1)
	since := number("sinceSeconds", 1)
	switch {
	case since != nil && v.Get("sinceTime") != "":
		errs = append(errs, errors.New("sinceSeconds and sinceTime: at most one"))
	case since != nil:
		q.opts.Since = time.Now().Add(-time.Duration(*since) * time.Second)
	case v.Get("sinceTime") != "":
		t, err := time.Parse(time.RFC3339, v.Get("sinceTime"))
		if err != nil {
			errs = append(errs, fmt.Errorf("sinceTime=%q: not an RFC 3339 time", v.Get("sinceTime")))
		}
		q.opts.Since = t
	}
	switch st := v.Get("stream"); st {
	case "", corev1.LogStreamAll:
	case corev1.LogStreamStdout, corev1.LogStreamStderr:
		if q.opts.TailLines != nil {
			errs = append(errs, errors.New("tailLines is not supported with stream Stdout or Stderr"))
		}
		q.stream = st
	default:
		errs = append(errs, fmt.Errorf("stream=%q: want All, Stdout or Stderr", st))
	}
	return q, errors.Join(errs...)
}

// lazyWriter sends the response's header with the first bytes of the
// log, so that an error before them is still an error status, and
// flushes every write: a followed log reaches the client line by line.
type lazyWriter struct {
	w       http.ResponseWriter
	started bool
}

func (l *lazyWriter) start() {
	if !l.started {
		l.started = true
		l.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		l.w.WriteHeader(http.StatusOK)
	}
}

func (l *lazyWriter) Write(p []byte) (int, error) {
	l.start()
	n, err := l.w.Write(p)
	if f, ok := l.w.(http.Flusher); ok {
		f.Flush()
	}
	return n, err
}
