package app

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// kubeletHelpFlag is a flag line of the kubelet's --help: its name, and
// its value's name if it takes a value.
var kubeletHelpFlag = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)(?: (\S+))?\s{2,}`)

// TestKubeletFlagsAreAllKnown reads the kubelet's own --help (the cached
// binary's, which an integration test keeps equal) and requires every
// flag in it to be nodeagent's, under its name or its kubelet name, or a
// kubelet-only flag of the table, taking a value as the kubelet's does.
func TestKubeletFlagsAreAllKnown(t *testing.T) {
	help, err := os.ReadFile("testdata/kubelet-v1.37.2-help.txt")
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("nodeagent", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	matches := kubeletHelpFlag.FindAllStringSubmatch(string(help), -1)
	if len(matches) < 100 {
		t.Fatalf("read %d flags from the kubelet's --help, want its whole set", len(matches))
	}
	// The value names pflag takes from a usage's `quoted` word.
	boolsWithAValueName := []string{"seccomp-default", "version"}
	for _, m := range matches {
		name, takesValue := m[1], m[2] != ""
		if name == "help" || name == "version" {
			continue // pflag's and verflag's own
		}
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("--%s: a kubelet flag nodeagent neither has nor refuses by name", name)
			continue
		}
		if _, placeholder := f.Value.(*kubeletOnlyValue); placeholder {
			isBool := f.NoOptDefVal != ""
			if isBool == takesValue && !slices.Contains(boolsWithAValueName, name) {
				t.Errorf("--%s: nodeagent takes it as a bool: %v, the kubelet: %v", name, isBool, !takesValue)
			}
		}
	}
}

func TestKubeletNamesSetNodeagentsFlags(t *testing.T) {
	o, err := parseArgs(t, "--pod-manifest-path=/etc/kubernetes/manifests", "--container-runtime-endpoint", "unix:///run/x.sock",
		"--hostname-override=Node-7")
	if err != nil {
		t.Fatal(err)
	}
	if o.ManifestDir != "/etc/kubernetes/manifests" || o.CRIEndpoint != "unix:///run/x.sock" || o.NodeName != "node-7" {
		t.Errorf("manifest dir %q, CRI endpoint %q, node name %q", o.ManifestDir, o.CRIEndpoint, o.NodeName)
	}

	fs := pflag.NewFlagSet("nodeagent", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	help := fs.FlagUsages()
	for _, want := range []string{"(kubelet: --pod-manifest-path)", "(kubelet: --hostname-override)", "--healthz-bind-address and --healthz-port"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help does not say %q", want)
		}
	}
	if strings.Contains(help, "cpu-manager-policy") {
		t.Errorf("--help lists the kubelet flags nodeagent refuses")
	}
}

// One test per refusal: the message names the flag, its value and what
// nodeagent does instead.
func TestKubeletOnlyFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cpu-manager-policy=static"}, "--cpu-manager-policy=static is a kubelet flag nodeagent does not implement: nodeagent has no CPU manager"},
		{[]string{"--anonymous-auth"}, "--anonymous-auth=true is a kubelet flag nodeagent does not implement: the node API refuses anonymous requests"},
		// A value after a space is the flag's, not an argument.
		{[]string{"--cloud-provider", "external"}, "--cloud-provider=external is a kubelet flag nodeagent does not implement: nodeagent does not wait for a cloud controller"},
		{[]string{"--image-service-endpoint=unix:///run/other.sock"}, "nodeagent pulls images through --container-runtime-endpoint"},
		{[]string{"--config-dir=/etc/kubelet.conf.d"}, "put the settings in the one --config file"},
		{[]string{"--healthz-port=10248", "--serve-address=127.0.0.1:9999"}, "give one or the other"},
	} {
		_, err := parseArgs(t, append([]string{"--manifest-dir=/m"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestKubeletOnlyFlagsHarmlessAreNoted(t *testing.T) {
	_, notes, err := parseArgsNotes(t, "--manifest-dir=/m", "--pod-infra-container-image=registry.k8s.io/pause:3.10",
		"--fail-swap-on=false", "--authorization-mode", "Webhook", "--cgroups-per-qos")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--pod-infra-container-image=registry.k8s.io/pause:3.10 is a kubelet flag nodeagent ignores",
		"--fail-swap-on=false", "--authorization-mode=Webhook", "--cgroups-per-qos=true"} {
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("no note says %q: %q", want, notes)
		}
	}
	if len(notes) != 4 {
		t.Errorf("%d notes, want one per flag: %q", len(notes), notes)
	}
}

func TestKubeletHealthzFlagsSetServeAddress(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--healthz-port=12345"}, "127.0.0.1:12345"},
		{[]string{"--healthz-bind-address=0.0.0.0"}, "0.0.0.0:10248"},
		{[]string{"--healthz-bind-address=::1", "--healthz-port=1"}, "[::1]:1"},
		{[]string{"--healthz-port=0"}, ""},
	} {
		o, err := parseArgs(t, append([]string{"--manifest-dir=/m"}, tc.args...)...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if o.ServeAddress != tc.want {
			t.Errorf("%v: --serve-address %q, want %q", tc.args, o.ServeAddress, tc.want)
		}
	}
}
