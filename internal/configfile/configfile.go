package configfile

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Apply sets every flag the YAML file at path names and the command line
// did not: the file's keys are the flags' names, so a setting reads the
// same in both places, and a flag given on the command line wins. Unknown
// keys are errors, as a misspelt setting must not pass silently. A list
// sets a repeatable flag once per item.
//
// The file may instead be a kubelet's KubeletConfiguration (it has an
// apiVersion): its fields set the flags kubeletFields names, and a field
// nodeagent does not implement is an error, or a note returned for the
// log when it is harmless.
func Apply(fs *pflag.FlagSet, path string) (notes []string, err error) { return apply(fs, path, true) }

// ApplyKnown is Apply for a tool that reads some of the agent's settings:
// keys fs has no flag for are skipped (the agent itself refuses the
// misspelt ones).
func ApplyKnown(fs *pflag.FlagSet, path string) error {
	_, err := apply(fs, path, false)
	return err
}

func apply(fs *pflag.FlagSet, path string, strict bool) ([]string, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	var settings map[string]any
	if err := yaml.Unmarshal(data, &settings); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	kubelet := isKubeletConfiguration(settings)
	if (kubelet && kubeletHoldsCredentials(settings)) || (!kubelet && holdsCredentials(settings)) {
		fi, err := os.Stat(path)
		if err == nil {
			err = CheckPrivate(path, fi)
		}
		if err != nil {
			return nil, fmt.Errorf("config file (it sets the manifest URL's headers, or userinfo in the URL): %w", err)
		}
	}
	if kubelet {
		return applyKubeletConfiguration(fs, path, data, settings, strict)
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		f := fs.Lookup(key)
		if (f == nil || key == "config") && !strict {
			continue
		}
		if f == nil || key == "config" {
			return nil, fmt.Errorf("config file %s: unknown setting %q (settings are named as the flags: see --help)", path, key)
		}
		if f.Changed {
			continue
		}
		values, err := flagValues(settings[key])
		if err != nil {
			return nil, fmt.Errorf("config file %s: %s: %w", path, key, err)
		}
		for _, v := range values {
			if err := fs.Set(key, v); err != nil {
				return nil, fmt.Errorf("config file %s: %s: %w", path, key, err)
			}
		}
	}
	return nil, nil
}

// flagValues spells a YAML value as flag arguments.
func flagValues(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case bool:
		return []string{strconv.FormatBool(v)}, nil
	case float64: // sigs.k8s.io/yaml decodes every number as float64
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}, nil
	case []any:
		var out []string
		for _, item := range v {
			vs, err := flagValues(item)
			if err != nil {
				return nil, err
			}
			if len(vs) != 1 {
				return nil, fmt.Errorf("a list item must be a plain value")
			}
			out = append(out, vs...)
		}
		return out, nil
	}
	b, _ := json.Marshal(v)
	return nil, fmt.Errorf("want a plain value or a list, not %s", b)
}

// holdsCredentials tells whether config file settings include what is
// surely a credential: headers for the manifest URL, or userinfo in it.
func holdsCredentials(settings map[string]any) bool {
	if settings["manifest-url-header"] != nil {
		return true
	}
	raw, _ := settings["manifest-url"].(string)
	u, err := url.Parse(raw)
	return err == nil && u.User != nil
}

// CheckPrivate refuses a file that holds credentials and that is not a
// regular file only its owner may access.
func CheckPrivate(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s: mode %04o lets its group or others access it, and it holds credentials: make it readable by its owner only (chmod 0600)", path, perm)
	}
	return nil
}

// maxBytes bounds the config file: settings fill a few kilobytes.
const maxBytes = 1 << 20

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- the path is the operator's own --config
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxBytes {
		return nil, fmt.Errorf("%s: longer than the limit of %d bytes", path, maxBytes)
	}
	return data, nil
}
