package nodeapi

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
)

// The node's system logs, as the kubelet's system log handler serves them
// (nodes/log): /logs/ lists the log directory, /logs/{path} is a file or a
// directory below it, read-only. A file is sent as it is when it is
// opened, so a growing log does not keep the response open.
//
// The directory is opened as an os.Root: no path, "..", or symbolic link
// reaches outside it (the kubelet's http.Dir follows a link anywhere):
// such a link is listed, and refused (403).

// nodeLogQueryParams are the parameters of the kubelet's node log query
// (journal and service logs, filtered), which needs its NodeLogQuery
// feature gate, off by default; this server does not implement it.
var nodeLogQueryParams = []string{"query", "sinceTime", "untilTime", "tailLines", "pattern", "boot"}

// systemLogs serves Options.SystemLogDir under /logs/.
func (s *Server) systemLogs() http.Handler {
	dir := s.opts.SystemLogDir
	if dir == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "logs endpoint is disabled (--enable-system-log-handler=false)", http.StatusMethodNotAllowed)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for _, p := range nodeLogQueryParams {
			if q.Has(p) {
				http.Error(w, fmt.Sprintf("the node log query (%s) is not served: it is the kubelet's NodeLogQuery feature, off by default; "+
					"ask for a file or directory under /logs/ without %s", strings.Join(nodeLogQueryParams, ", "), p), http.StatusBadRequest)
				return
			}
		}
		// Opened for each request: the directory may be rotated or made
		// after the server started, and nothing stays open between requests.
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.Error(w, fmt.Sprintf("the system log directory: %v", err), http.StatusNotFound)
			return
		}
		defer root.Close()
		http.StripPrefix("/logs", http.FileServerFS(refusingFS{root.FS()})).ServeHTTP(w, r)
	})
}

// refusingFS answers a file it cannot open, for another reason than its
// absence, as forbidden (403), not as the server's fault (500): os.Root's
// refusal of a link out of the directory has no error to test for.
type refusingFS struct{ fs.FS }

func (f refusingFS) Open(name string) (fs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return file, err
}
