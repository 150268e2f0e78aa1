package config

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The sources take outside input: a file as the file source reads it
// (FuzzFileSourceRead) and a body as the HTTP source fetches it
// (FuzzHTTPSourceBody); staging/manifest fuzzes the decoder and validation
// themselves. None may panic or hang; every refusal is a *ManifestError
// naming its origin; every pod accepted is complete. `go test` runs their
// seeds; hack/test-fuzz.sh fuzzes each for a bounded time.

// goodPodJSON is a valid one-container pod in JSON.
const goodPodJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}}`

// sourceSeeds are the bad-manifest corpus and a few good manifests, also
// with a UTF-8 byte-order mark.
func sourceSeeds(f *testing.F) [][]byte {
	seeds := corpusSeeds(f)
	for _, g := range []string{
		goodPodJSON,
		podManifest("web", "nginx:1"),
		`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`,
	} {
		seeds = append(seeds, []byte(g), append([]byte("\uFEFF"), g...))
	}
	return seeds
}

// checkParsed checks the pods a source accepted, or its refusal.
func checkParsed(t *testing.T, origin string, pods []*corev1.Pod, err error) {
	t.Helper()
	if err != nil {
		var me *manifest.ManifestError
		if !errors.As(err, &me) || !errors.Is(err, manifest.ErrManifest) || me.Origin != origin {
			t.Fatalf("error %T %v is not a *ManifestError naming %s", err, err, origin)
		}
		return
	}
	for _, p := range pods {
		if p.UID == "" || p.Spec.NodeName != testNode || len(p.Spec.Containers) == 0 || !podtypes.IsStaticPod(p) {
			t.Fatalf("accepted an incomplete pod: %+v", p)
		}
	}
}

func FuzzFileSourceRead(f *testing.F) {
	for _, seed := range sourceSeeds(f) {
		f.Add(seed)
	}
	dir := f.TempDir() // one file, rewritten by each run
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := NewFileSource(FileOptions{Path: dir, NodeName: testNode, Sink: chanSink(nil)})
		if err != nil {
			t.Fatal(err)
		}
		path := writeFile(t, dir, "m.yaml", string(data))
		r := fs.read(path, nil, false, maxSettleAttempts)
		if r.res != readOK {
			t.Fatalf("a regular file of %d bytes: read result %v, %v", len(data), r.res, r.err)
		}
		checkParsed(t, path, r.pods, r.err)
		if len(data) > manifest.MaxManifestBytes && !errors.Is(r.err, manifest.ErrTooLarge) {
			t.Fatalf("a file of %d bytes: %v, want ErrTooLarge", len(data), r.err)
		}
	})
}

// bodyTransport answers every request with body, and a Content-Length
// that may lie.
type bodyTransport struct {
	body   []byte
	length int64
}

func (b bodyTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", ContentLength: b.length,
		Body: io.NopCloser(bytes.NewReader(b.body)), Header: http.Header{}}, nil
}

func FuzzHTTPSourceBody(f *testing.F) {
	for _, seed := range sourceSeeds(f) {
		f.Add(seed, int64(len(seed)))
	}
	f.Add([]byte(goodPodJSON), int64(-1))
	f.Add([]byte(goodPodJSON), int64(manifest.MaxManifestBytes+1))
	const url = "http://manifests.example/pods"
	f.Fuzz(func(t *testing.T, body []byte, length int64) {
		sink := make(chanSink, 1)
		s, err := NewHTTPSource(HTTPOptions{URL: url, NodeName: testNode, Sink: sink,
			Client: &http.Client{Transport: bodyTransport{body, length}}})
		if err != nil {
			t.Fatal(err)
		}
		s.poll(context.Background())
		select {
		case u := <-sink:
			if err := s.Err(); err != nil || u.Op != podtypes.SET || u.Source != podtypes.HTTPSource {
				t.Fatalf("sent %s with Err() = %v", summarize(u), err)
			}
			checkParsed(t, url, u.Pods, nil)
			if len(body) > manifest.MaxManifestBytes {
				t.Fatalf("accepted a body of %d bytes", len(body))
			}
		default:
			var me *manifest.ManifestError
			if err := s.Err(); !errors.As(err, &me) || me.Origin != url {
				t.Fatalf("nothing sent, and Err() = %T %v", err, err)
			}
		}
	})
}
