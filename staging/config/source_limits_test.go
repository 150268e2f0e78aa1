package config

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestFileSourceRefusesAFileOverMaxManifestBytes(t *testing.T) {
	dir := t.TempDir()
	big := writeFile(t, dir, "big.yaml", podManifest("big", "i:1")+"#"+strings.Repeat("x", manifest.MaxManifestBytes)+"\n")
	writeFile(t, dir, "small.yaml", podManifest("small", "i:1"))
	s, m := runFileSource(t, FileOptions{Path: dir})
	expect(t, m, "ADD file [file:small-node1]")
	err := s.Err(big)
	if !errors.Is(err, manifest.ErrTooLarge) || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), fmt.Sprintf("the limit is %d", manifest.MaxManifestBytes)) {
		t.Errorf("Err(%s) = %v, want a refusal naming the file and the limit", big, err)
	}
}

func TestHTTPSourceRefusesABodyOverMaxManifestBytes(t *testing.T) {
	body := podManifest("web", "i:1") + "#" + strings.Repeat("x", manifest.MaxManifestBytes) + "\n"
	srv := &fakeServer{status: http.StatusOK, body: body}
	s, _, _ := runHTTPSource(t, srv, HTTPOptions{})
	eventually(t, "the size refusal", func() bool { return s.Err() != nil })
	if err := s.Err(); !errors.Is(err, manifest.ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("limit of %d bytes", manifest.MaxManifestBytes)) {
		t.Errorf("Err() = %v, want a refusal naming the limit", err)
	}
}

func TestSourcesRefuseALimitAboveMaxManifestBytes(t *testing.T) {
	sink := chanSink(make(chan podtypes.PodUpdate))
	_, err := NewFileSource(FileOptions{Path: "/x", NodeName: "n", Sink: sink, MaxFileBytes: manifest.MaxManifestBytes + 1})
	if err == nil || !strings.Contains(err.Error(), "MaxManifestBytes") {
		t.Errorf("NewFileSource with MaxFileBytes above the limit: %v", err)
	}
	_, err = NewHTTPSource(HTTPOptions{URL: "http://x", NodeName: "n", Sink: sink, MaxBodyBytes: manifest.MaxManifestBytes + 1})
	if err == nil || !strings.Contains(err.Error(), "MaxManifestBytes") {
		t.Errorf("NewHTTPSource with MaxBodyBytes above the limit: %v", err)
	}
}
