package app

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/nodeagent/nodeagent/internal/configfile"
	"github.com/nodeagent/nodeagent/staging/config"
)

// maxHeaderFileBytes bounds --manifest-url-header-file: a few headers.
const maxHeaderFileBytes = 64 << 10

// urlHeader returns the headers of --manifest-url-header and
// --manifest-url-header-file. No error shows a header's value: it may be
// a credential.
func (o *Options) urlHeader() (http.Header, error) {
	h := http.Header{}
	for i, flag := range o.ManifestURLHeaders {
		// The kubelet's syntax: Name:value pairs, comma-separated, parsed
		// by the kubelet's own flag type.
		pairs := map[string][]string{}
		if err := cliflag.NewColonSeparatedMultimapStringString(&pairs).Set(flag); err != nil {
			return nil, fmt.Errorf("--manifest-url-header #%d: want Name:value pairs separated by commas, as the kubelet's flag (the value is not shown)", i+1)
		}
		for _, name := range slices.Sorted(maps.Keys(pairs)) {
			for _, value := range pairs[name] {
				if err := addHeader(h, name, value); err != nil {
					return nil, fmt.Errorf("--manifest-url-header #%d: %w", i+1, err)
				}
			}
		}
	}
	if o.ManifestURLHeaderFile == "" {
		return h, nil
	}
	data, err := readPrivateFile(o.ManifestURLHeaderFile, maxHeaderFileBytes)
	if err != nil {
		return nil, fmt.Errorf("--manifest-url-header-file %w", err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := addHeaderLine(h, line); err != nil {
			return nil, fmt.Errorf("--manifest-url-header-file %s: line %d: %w", o.ManifestURLHeaderFile, i+1, err)
		}
	}
	return h, nil
}

// addHeaderLine adds one "Name: value" header to h.
func addHeaderLine(h http.Header, kv string) error {
	name, value, ok := strings.Cut(kv, ":")
	if !ok {
		return fmt.Errorf("want 'Name: value' (the value is not shown)")
	}
	return addHeader(h, strings.TrimSpace(name), strings.TrimSpace(value))
}

// addHeader adds one header to h, checked. No error shows the value.
func addHeader(h http.Header, name, value string) error {
	switch {
	case name == "":
		return fmt.Errorf("want 'Name: value' (the value is not shown)")
	case !httpguts.ValidHeaderFieldName(name):
		// Not shown either: a mistyped line may hold the value there.
		return fmt.Errorf("the text before the first colon is not a valid header name (it is not shown)")
	case !httpguts.ValidHeaderFieldValue(value):
		return fmt.Errorf("the value of %s has characters a header cannot carry (the value is not shown)", name)
	}
	h.Add(name, value)
	return nil
}

// readPrivateFile reads a file of credentials, at most limit bytes. It
// refuses a file its group or others may access: they could read the
// credentials, or change them.
func readPrivateFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- the path is the operator's own setting
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := configfile.CheckPrivate(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: longer than the limit of %d bytes", path, limit)
	}
	return data, nil
}

// checkCommandLine refuses credentials in the URL given on the command
// line, which every user of the node can read in /proc/<pid>/cmdline.
func checkCommandLine(fs *pflag.FlagSet, o *Options) error {
	if !fs.Changed("manifest-url") {
		return nil
	}
	if u, err := url.Parse(o.ManifestURL); err == nil && u.User != nil {
		return fmt.Errorf("--manifest-url %s carries credentials on the command line, where every user of the node can read them: "+
			"send them as an Authorization header from --manifest-url-header-file, or set manifest-url in a --config file only root can read",
			config.RedactURL(o.ManifestURL))
	}
	return nil
}

// commandLineWarnings says which settings given on the command line may
// be credentials that every user of the node can read there. Main logs
// them once logging is set up.
func commandLineWarnings(fs *pflag.FlagSet, o *Options) []string {
	var out []string
	if fs.Changed("manifest-url-header") {
		out = append(out, "--manifest-url-header is given on the command line, which every user of the node can read; if it carries a credential, move it to --manifest-url-header-file")
	}
	if u, err := url.Parse(o.ManifestURL); fs.Changed("manifest-url") && err == nil && u.RawQuery != "" {
		out = append(out, "--manifest-url has a query on the command line, which every user of the node can read; if it carries a credential, set manifest-url in a --config file only root can read")
	}
	return out
}
