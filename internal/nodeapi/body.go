package nodeapi

import (
	"fmt"
	"net/http"
)

// limitBody refuses a request whose declared body is over maxBodyBytes
// (413) before anything else runs, and cuts one of unknown length at
// that size: the kubelet's paths take their arguments in the URL, so a
// body is at most noise, and a large one is load the node need not take.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBodyBytes {
			http.Error(w, fmt.Sprintf("request body of %d bytes is over the node API's limit of %d", r.ContentLength, maxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		if r.ContentLength < 0 { // chunked; an empty body stays http.NoBody, which the stream proxy relies on
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}
