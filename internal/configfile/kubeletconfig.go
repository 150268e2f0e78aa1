package configfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

const kubeletConfigKind = "KubeletConfiguration"

// isKubeletConfiguration tells a kubelet config file from a file of
// nodeagent's own settings, which have no apiVersion or kind.
func isKubeletConfiguration(settings map[string]any) bool {
	_, v := settings["apiVersion"]
	_, k := settings["kind"]
	return v || k
}

// applyKubeletConfiguration sets the flags of the fields a
// KubeletConfiguration file sets, through kubeletFields, where the command
// line did not set them. A field is set when the file has it and, unless
// it is a pointer or a bool in the Go type, with a value other than zero:
// the kubelet takes a zero there for its default, and kubeadm writes such
// zeros (syncFrequency: 0s). A field nodeagent does not implement is an
// error naming it, unless it is harmless, which is returned in notes for
// the log; with strict false (a tool that reads some settings) both are
// skipped.
func applyKubeletConfiguration(fs *pflag.FlagSet, path string, data []byte, raw map[string]any, strict bool) (notes []string, err error) {
	gv := kubeletconfigv1beta1.SchemeGroupVersion.String()
	if raw["apiVersion"] != gv || raw["kind"] != kubeletConfigKind {
		return nil, fmt.Errorf("config file %s: apiVersion %v, kind %v: a config file is either nodeagent's settings (keyed by flag name, no apiVersion) or a %s %s",
			path, raw["apiVersion"], raw["kind"], gv, kubeletConfigKind)
	}
	var c kubeletconfigv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	var set []setField
	collectSet(reflect.ValueOf(&c).Elem(), raw, "", &set)

	table := map[string]kubeletField{}
	for _, f := range kubeletFields {
		table[f.Path] = f
	}
	var errs []error
	for _, f := range set {
		switch e, ok := table[f.path]; {
		case ok && fs.Lookup(e.Flag) != nil:
			if err := setFlag(fs, e, f.raw); err != nil {
				errs = append(errs, fmt.Errorf("config file %s: %s: %w", path, f.path, err))
			}
		case f.path == healthzAddressPath || f.path == healthzPortPath:
			// setHealthz, below: the two are one flag.
		case !strict:
			// A tool that reads some settings: the agent judges the rest.
		case ok:
			errs = append(errs, fmt.Errorf("config file %s: %s is set, and this build of nodeagent has no --%s to hold it", path, f.path, e.Flag))
		default:
			value := f.json()
			if h, ok := harmlessFields[f.path]; ok && slices.Contains(h.values, value) {
				notes = append(notes, fmt.Sprintf("config file %s: %s: %s is not a setting of nodeagent, which does so anyway (%s)", path, f.path, value, h.why))
				continue
			}
			why := unimplementedWhy[f.path]
			if why == "" {
				why = "nodeagent has no such setting (nodeagent --help lists what it implements)"
			}
			errs = append(errs, fmt.Errorf("config file %s: %s is set (%s) but nodeagent does not implement it: %s", path, f.path, value, why))
		}
	}
	if err := setHealthz(fs, &c, raw); err != nil {
		errs = append(errs, fmt.Errorf("config file %s: %s/%s: %w", path, healthzAddressPath, healthzPortPath, err))
	}
	return notes, errors.Join(errs...)
}

// kubeletHoldsCredentials is holdsCredentials for a KubeletConfiguration.
func kubeletHoldsCredentials(raw map[string]any) bool {
	if raw["staticPodURLHeader"] != nil {
		return true
	}
	s, _ := raw["staticPodURL"].(string)
	u, err := url.Parse(s)
	return err == nil && u.User != nil
}

// setField is a field a file sets: its path, its decoded value and the
// file's own (YAML) value of it.
type setField struct {
	path  string
	value reflect.Value
	raw   any
}

// json is the field's value as JSON, bounded for a message.
func (f setField) json() string {
	b, err := json.Marshal(f.value.Interface())
	if err != nil {
		return fmt.Sprint(f.raw)
	}
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

// collectSet walks the decoded struct v beside the file's raw map of it,
// and appends the leaf fields the file sets. An object is walked into; a
// struct written as a scalar (a duration, a quantity) is a leaf.
func collectSet(v reflect.Value, raw map[string]any, prefix string, out *[]setField) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if sf.Anonymous || name == "" || name == "-" {
			continue // TypeMeta, inline: apiVersion and kind are checked
		}
		rv, present := raw[name]
		if !present {
			continue
		}
		path, fv := name, v.Field(i)
		if prefix != "" {
			path = prefix + "." + name
		}
		if sub, ok := rv.(map[string]any); ok && fv.Kind() == reflect.Struct {
			collectSet(fv, sub, path, out)
			continue
		}
		if !isUnset(fv) {
			*out = append(*out, setField{path: path, value: fv, raw: rv})
		}
	}
}

// isUnset tells a value the kubelet's defaulting takes for unset: a nil
// pointer, an empty list or map, a zero (of a non-pointer field, whose
// zero the kubelet cannot tell from absent). A bool present is set.
func isUnset(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Bool:
		return false
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	}
	if v.CanAddr() {
		if z, ok := v.Addr().Interface().(interface{ IsZero() bool }); ok {
			return z.IsZero()
		}
	}
	return v.IsZero()
}

// setFlag sets e's flag from the file's value of its field, unless the
// command line set it.
func setFlag(fs *pflag.FlagSet, e kubeletField, raw any) error {
	if fs.Lookup(e.Flag).Changed {
		return nil
	}
	values, err := spell(e.Spelling, raw)
	if err != nil {
		return err
	}
	for _, v := range values {
		if err := fs.Set(e.Flag, v); err != nil {
			return fmt.Errorf("as --%s: %w", e.Flag, err)
		}
	}
	return nil
}

// spell writes a field's YAML value as flag arguments.
func spell(s spelling, raw any) ([]string, error) {
	switch s {
	case thresholds, joinedMap:
		sep := "="
		if s == thresholds {
			sep = "<"
		}
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want a map")
		}
		return []string{joinMap(m, sep)}, nil
	case taints:
		items, _ := raw.([]any)
		var out []string
		for _, item := range items {
			m, _ := item.(map[string]any)
			t := fmt.Sprint(m["key"])
			if v, _ := m["value"].(string); v != "" {
				t += "=" + v
			}
			out = append(out, t+":"+fmt.Sprint(m["effect"]))
		}
		return out, nil
	case headers:
		m, _ := raw.(map[string]any)
		var out []string
		for _, name := range sortedKeys(m) {
			values, _ := m[name].([]any)
			for _, v := range values {
				out = append(out, name+":"+fmt.Sprint(v))
			}
		}
		return out, nil
	case vModule:
		items, _ := raw.([]any)
		var parts []string
		for _, item := range items {
			m, _ := item.(map[string]any)
			parts = append(parts, fmt.Sprintf("%v=%v", m["filePattern"], m["verbosity"]))
		}
		return []string{strings.Join(parts, ",")}, nil
	case flushFrequency:
		if n, ok := raw.(float64); ok {
			return []string{time.Duration(n).String()}, nil
		}
	}
	if m, ok := raw.(map[string]any); ok {
		return []string{joinMap(m, "=")}, nil
	}
	return flagValues(raw)
}

func joinMap(m map[string]any, sep string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+sep+fmt.Sprint(m[k]))
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// setHealthz sets --serve-address from healthzBindAddress and
// healthzPort, each keeping the flag's part the file leaves out; port 0
// disables the endpoint, as it does the kubelet's.
func setHealthz(fs *pflag.FlagSet, c *kubeletconfigv1beta1.KubeletConfiguration, raw map[string]any) error {
	f := fs.Lookup(healthzFlag)
	_, hasPort := raw[healthzPortPath]
	if f == nil || f.Changed || (c.HealthzBindAddress == "" && (!hasPort || c.HealthzPort == nil)) {
		return nil
	}
	host, port, err := net.SplitHostPort(f.Value.String())
	if err != nil {
		host, port = "127.0.0.1", "10248" // the kubelet's
	}
	if c.HealthzBindAddress != "" {
		host = c.HealthzBindAddress
	}
	if hasPort && c.HealthzPort != nil {
		if *c.HealthzPort == 0 {
			return fs.Set(healthzFlag, "")
		}
		port = strconv.Itoa(int(*c.HealthzPort))
	}
	return fs.Set(healthzFlag, net.JoinHostPort(host, port))
}
