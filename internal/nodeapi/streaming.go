package nodeapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	streamproxy "k8s.io/apiserver/pkg/util/proxy"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// maxCommandArgs and maxCommandBytes bound the command of an exec or run.
const (
	maxCommandArgs  = 1024
	maxCommandBytes = 64 << 10
)

// serveExec and serveAttach proxy a session on a running container's
// streams; servePortForward one into the pod's network namespace. The
// runtime serves the streams (SPDY, and WebSocket for the protocols it
// knows); the server only asks it for the session's URL and proxies the
// upgraded connection there, as the kubelet does. kubectl's WebSocket
// sessions (v5 streams, port-forward's tunnel) reach the node as they
// are, since the Node declares ExtendWebSocketsToKubelet (internal/node),
// and are translated to SPDY here, as the kubelet translates them: the
// apiserver would otherwise translate them on its side, which made an
// exec through kubectl about 7 ms slower than the kubelet's
// (hack/bench-nodeapi.sh).
func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	s.serveContainerStream(w, r, true)
}

func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request) {
	s.serveContainerStream(w, r, false)
}

func (s *Server) serveContainerStream(w http.ResponseWriter, r *http.Request, exec bool) {
	streams, err := streamOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var cmd []string
	if exec {
		if cmd, err = command(r.URL.Query()[corev1.ExecCommandParam]); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	id, status, err := s.runningContainer(r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	var u *url.URL
	if exec {
		u, err = s.opts.Runtime.ExecURL(r.Context(), id, cmd, streams)
	} else {
		u, err = s.opts.Runtime.AttachURL(r.Context(), id, streams)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		streamproxy.NewStreamTranslatorHandler(u, nil, 0, streamproxy.Options{
			Stdin: streams.Stdin, Stdout: streams.Stdout, Stderr: streams.Stderr, Tty: streams.TTY,
		}).ServeHTTP(w, r)
		return
	}
	s.proxyStream(w, r, u)
}

func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	pod, err := s.pathPod(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	ports, err := forwardedPorts(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u, err := s.opts.Runtime.PortForwardURL(r.Context(), pod.UID, ports)
	if errors.Is(err, runtime.ErrNotRunning) {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	} else if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if wsstream.IsWebSocketRequestWithTunnelingProtocol(r) {
		streamproxy.NewTunnelingHandler(s.streamProxy(u)).ServeHTTP(w, r)
		return
	}
	s.proxyStream(w, r, u)
}

// serveRun runs ?cmd= (split at spaces, as the kubelet does) in a running
// container and answers its output, stdout then stderr.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	cmd, err := command(strings.Split(r.URL.Query().Get("cmd"), " "))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, status, err := s.runningContainer(r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	res, err := s.opts.Runtime.ExecSync(r.Context(), id, cmd, s.opts.RunTimeout)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(res.Stdout)
	_, _ = w.Write(res.Stderr)
}

// proxyStream proxies the upgraded connection to the runtime's URL.
func (s *Server) proxyStream(w http.ResponseWriter, r *http.Request, u *url.URL) {
	s.streamProxy(u).ServeHTTP(w, r)
}

func (s *Server) streamProxy(u *url.URL) http.Handler {
	return proxy.NewUpgradeAwareHandler(u, nil, false, true, responder{s})
}

// responder answers a failed proxy attempt.
type responder struct{ s *Server }

func (rs responder) Error(w http.ResponseWriter, r *http.Request, err error) {
	rs.s.log.V(2).Info("proxying a stream to the runtime failed", "path", r.URL.Path, "err", err)
	code := http.StatusInternalServerError
	var status apierrors.APIStatus
	if errors.As(err, &status) { // the proxy's own: "Upgrade request required" is a 400
		code = int(status.Status().Code)
	}
	http.Error(w, err.Error(), code)
}

// pathPod is the pod the path names: {namespace}/{pod}, and {uid} when
// the path has one.
func (s *Server) pathPod(r *http.Request) (*corev1.Pod, error) {
	namespace, name, uid := r.PathValue("namespace"), r.PathValue("pod"), types.UID(r.PathValue("uid"))
	pod, ok := s.findPod(namespace, name, uid)
	if !ok {
		return nil, fmt.Errorf("pod %s/%s does not exist", namespace, name)
	}
	return pod, nil
}

// runningContainer is the runtime ID of the path's container, which must
// run; on error, the status to answer.
func (s *Server) runningContainer(r *http.Request) (string, int, error) {
	pod, err := s.pathPod(r)
	if err != nil {
		return "", http.StatusNotFound, err
	}
	name := r.PathValue("container")
	if !hasContainer(pod, name) {
		return "", http.StatusNotFound, fmt.Errorf("container %s is not in pod %s/%s", name, pod.Namespace, pod.Name)
	}
	id, err := s.opts.Runtime.RunningContainerID(r.Context(), pod.UID, name)
	if errors.Is(err, runtime.ErrNotRunning) {
		return "", http.StatusBadRequest, fmt.Errorf("container %s of pod %s/%s is not running", name, pod.Namespace, pod.Name)
	}
	if err != nil {
		return "", http.StatusInternalServerError, err
	}
	return id, 0, nil
}

// streamOptions reads which streams a session carries; a TTY merges
// stderr into stdout, as the kubelet has it.
func streamOptions(v url.Values) (runtime.StreamOptions, error) {
	on := func(key string) bool { return v.Get(key) == "1" || v.Get(key) == "true" }
	o := runtime.StreamOptions{Stdin: on(corev1.ExecStdinParam), Stdout: on(corev1.ExecStdoutParam), Stderr: on(corev1.ExecStderrParam), TTY: on(corev1.ExecTTYParam)}
	if o.TTY {
		o.Stderr = false
	}
	if !o.Stdin && !o.Stdout && !o.Stderr {
		return o, errors.New("a session needs at least one of stdin, stdout and stderr")
	}
	return o, nil
}

// command checks a command's size.
func command(args []string) ([]string, error) {
	if len(args) == 0 || args[0] == "" {
		return nil, errors.New("no command")
	}
	if len(args) > maxCommandArgs {
		return nil, fmt.Errorf("the command has %d arguments, more than %d", len(args), maxCommandArgs)
	}
	n := 0
	for _, a := range args {
		n += len(a)
	}
	if n > maxCommandBytes {
		return nil, fmt.Errorf("the command has %d bytes, more than %d", n, maxCommandBytes)
	}
	return args, nil
}

// forwardedPorts are the ports a WebSocket port-forward (the older
// protocol, not kubectl's tunnel) names in its query, as the kubelet reads
// them: ?ports=80,8080 or the parameter repeated, each 1 to 65535. The
// runtime's streaming server opens a pair of channels for each. SPDY and
// tunnelled clients name theirs on the stream: none here.
func forwardedPorts(r *http.Request) ([]int32, error) {
	if !wsstream.IsWebSocketRequest(r) || wsstream.IsWebSocketRequestWithTunnelingProtocol(r) {
		return nil, nil
	}
	values := r.URL.Query()["ports"]
	if len(values) == 0 {
		return nil, errors.New(`query parameter "ports" is required`)
	}
	var ports []int32
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("ports: %q is not a port (1-65535)", p)
			}
			ports = append(ports, int32(n)) // #nosec G115 -- at most 65535
		}
	}
	return ports, nil
}
