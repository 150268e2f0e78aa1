package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

func TestSourcesReportEveryInvalidOptionAtOnce(t *testing.T) {
	_, ferr := NewFileSource(FileOptions{MaxFileBytes: manifest.MaxManifestBytes + 1, Debounce: -time.Millisecond})
	_, herr := NewHTTPSource(HTTPOptions{URL: "ftp://u:s3cret@h/pods", Timeout: -time.Second})
	_, aerr := NewAPIServerSource(APIServerOptions{})
	for _, tc := range []struct {
		name     string
		err      error
		problems int
		want     []string
	}{
		{"NewFileSource", ferr, 5, []string{"FileOptions.Path is required", "FileOptions.NodeName is required", "FileOptions.Sink is required",
			"FileOptions.MaxFileBytes", "above MaxManifestBytes", "FileOptions.Debounce is negative"}},
		{"NewHTTPSource", herr, 4, []string{`HTTPOptions.URL ftp://xxxxx:xxxxx@h/pods: scheme "ftp" refused`, "HTTPOptions.NodeName is required",
			"HTTPOptions.Sink is required", "HTTPOptions.Timeout is negative"}},
		{"NewAPIServerSource", aerr, 3, []string{"APIServerOptions.Pods is required", "APIServerOptions.NodeName is required",
			"APIServerOptions.Sink is required"}},
	} {
		var joined interface{ Unwrap() []error }
		if !errors.As(tc.err, &joined) || len(joined.Unwrap()) != tc.problems {
			t.Fatalf("%s: %v, want %d problems reported at once", tc.name, tc.err, tc.problems)
		}
		for _, e := range joined.Unwrap() {
			if !errors.Is(e, ErrInvalidOptions) {
				t.Errorf("%s: %v does not wrap ErrInvalidOptions", tc.name, e)
			}
		}
		for _, want := range tc.want {
			if !strings.Contains(tc.err.Error(), want) {
				t.Errorf("%s: %v, want it to say %q", tc.name, tc.err, want)
			}
		}
	}
}
