package app

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/nodeagent/nodeagent/internal/configfile"
)

// exampleConfig is the documented config file make install puts in
// /etc/nodeagent/config.yaml.
const exampleConfig = "../../../deploy/config.yaml"

// settingLine matches a setting of the example, active (key: value) or
// commented out at its default (#key: value); prose is "# ...".
var settingLine = regexp.MustCompile(`^(#?)([a-z][a-z0-9-]*):(\s|$)`)

// documented returns the flags an operator sets in the file: every flag
// but --config itself and the hidden or deprecated ones.
func documented(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "config" && !f.Hidden && f.Deprecated == "" {
			names = append(names, f.Name)
		}
	})
	slices.Sort(names)
	return names
}

func readExample(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

func TestExampleConfigIsAccepted(t *testing.T) {
	o, err := parseArgs(t, "--config="+exampleConfig)
	if err != nil {
		t.Fatalf("the example config file is refused: %v", err)
	}
	if o.ManifestDir != "/etc/nodeagent/manifests" {
		t.Errorf("manifest-dir = %q, want the example's /etc/nodeagent/manifests", o.ManifestDir)
	}
}

func TestExampleConfigNamesEverySettingOnce(t *testing.T) {
	fs := pflag.NewFlagSet("nodeagent", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	seen := map[string]int{}
	for _, line := range readExample(t) {
		if m := settingLine.FindStringSubmatch(line); m != nil {
			seen[m[2]]++
		}
	}
	for _, name := range documented(fs) {
		if seen[name] != 1 {
			t.Errorf("deploy/config.yaml names --%s %d times, want once (a commented-out line at its default, with its --help text)", name, seen[name])
		}
		delete(seen, name)
	}
	for key := range seen {
		t.Errorf("deploy/config.yaml names %q, which is no flag an operator sets", key)
	}
}

// Uncommenting every setting of the example must change nothing: each
// commented-out value is the flag's default, and the file still validates.
func TestExampleConfigShowsTheDefaults(t *testing.T) {
	var lines []string
	for _, line := range readExample(t) {
		if m := settingLine.FindStringSubmatch(line); m != nil && m[1] == "#" {
			line = strings.TrimPrefix(line, "#")
		}
		lines = append(lines, line)
	}
	path := writeConfig(t, strings.Join(lines, "\n"))

	o := NewOptions()
	fs := pflag.NewFlagSet("nodeagent", pflag.ContinueOnError)
	o.AddFlags(fs)
	if _, err := configfile.Apply(fs, path); err != nil {
		t.Fatalf("the example with every setting uncommented is refused: %v", err)
	}
	for _, name := range documented(fs) {
		f := fs.Lookup(name)
		if name != "manifest-dir" && f.Value.String() != f.DefValue {
			t.Errorf("deploy/config.yaml shows --%s as %q, but its default is %q", name, f.Value.String(), f.DefValue)
		}
	}
	o.complete()
	if err := o.Validate(); err != nil {
		t.Errorf("the example with every setting uncommented does not validate: %v", err)
	}
}
