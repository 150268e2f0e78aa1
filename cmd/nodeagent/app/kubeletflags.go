package app

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// The kubelet's command line, so that a node moves from the kubelet to
// nodeagent with its kubeadm-flags.env: the kubelet's names of nodeagent's
// flags are accepted for them, and every other kubelet flag is known, to
// be refused with what nodeagent does instead, or, when harmless, read and
// logged.

// kubeletNames are the kubelet's names of flags nodeagent names
// otherwise; --help names them beside nodeagent's.
var kubeletNames = map[string]string{
	"pod-manifest-path":          "manifest-dir",
	"container-runtime-endpoint": "cri-endpoint",
	"hostname-override":          "node-name",
}

// kubeletOnly is a kubelet flag nodeagent has no flag for.
type kubeletOnly struct {
	isBool bool
	// harmless are the values that describe what nodeagent does anyway:
	// given one, the flag is logged, not refused. "*" is any value.
	harmless []string
	// why says what nodeagent does instead, or which flag of its own
	// holds the setting.
	why string
}

// The kubelet's --healthz-bind-address and --healthz-port are together
// nodeagent's --serve-address.
const (
	healthzAddressFlag = "healthz-bind-address"
	healthzPortFlag    = "healthz-port"
)

// kubeletOnlyFlags are the kubelet's flags (v1.37, and a few that older
// kubeadm-flags.env files carry) nodeagent has no flag for.
// TestKubeletFlagsAreAllKnown checks the list against the kubelet's --help.
var kubeletOnlyFlags = map[string]kubeletOnly{
	healthzAddressFlag: {why: "it is the host of --serve-address"},
	healthzPortFlag:    {why: "it is the port of --serve-address"},

	"pod-infra-container-image": {harmless: []string{"*"}, why: "the sandbox image is the runtime's setting (containerd's sandbox_image), as for the kubelet since v1.27"},
	"container-runtime":         {harmless: []string{"remote"}, why: "the runtime is always a CRI endpoint"},
	"anonymous-auth":            {isBool: true, harmless: []string{"false"}, why: "the node API refuses anonymous requests"},
	"authentication-token-webhook": {isBool: true, harmless: []string{"true"},
		why: "the node API reviews bearer tokens with the apiserver"},
	"authentication-token-webhook-cache-ttl":       {harmless: []string{"2m0s", "2m"}, why: "token reviews are cached 2 minutes"},
	"authorization-mode":                           {harmless: []string{"Webhook"}, why: "the node API asks the apiserver (Webhook) for every request"},
	"authorization-webhook-cache-authorized-ttl":   {harmless: []string{"5m0s", "5m"}, why: "allowed requests are cached 5 minutes"},
	"authorization-webhook-cache-unauthorized-ttl": {harmless: []string{"30s"}, why: "denied requests are cached 30 seconds"},
	"cgroups-per-qos":                              {isBool: true, harmless: []string{"true"}, why: "pods are placed in the kubelet's QoS cgroup tree"},
	"enforce-node-allocatable":                     {harmless: []string{"pods"}, why: "the pods' cgroup is bounded by the allocatable; system and kube reserved cgroups are not enforced"},
	"enable-debugging-handlers":                    {isBool: true, harmless: []string{"true"}, why: "the node API serves logs, exec, attach and port-forward"},
	"enable-server":                                {isBool: true, harmless: []string{"true"}, why: "--port=0 turns the node API off"},
	"register-node":                                {isBool: true, harmless: []string{"true"}, why: "a connected agent registers its Node; without --kubeconfig it runs standalone"},
	"fail-swap-on":                                 {isBool: true, harmless: []string{"false"}, why: "nodeagent does not check for swap"},
	"fail-cgroupv1":                                {isBool: true, harmless: []string{"false"}, why: "nodeagent runs on cgroup v1 and v2"},
	"cloud-provider":                               {harmless: []string{""}, why: "nodeagent does not wait for a cloud controller to initialize its Node"},
	"read-only-port":                               {harmless: []string{"0"}, why: "nodeagent serves no unauthenticated read-only port"},
	"cpu-cfs-quota":                                {isBool: true, harmless: []string{"true"}, why: "CPU limits are CFS quotas"},
	"make-iptables-util-chains":                    {isBool: true, harmless: []string{"false"}, why: "nodeagent makes no iptables chains"},
	"enable-controller-attach-detach":              {isBool: true, harmless: []string{"true"}, why: "nodeagent attaches no volumes; the controller-manager does"},
	"seccomp-default":                              {isBool: true, harmless: []string{"false"}, why: "containers without a seccomp profile run Unconfined"},
	"feature-gates":                                {harmless: []string{""}, why: "nodeagent has no feature gates: each feature has a flag of its own"},
	"protect-kernel-defaults":                      {isBool: true, harmless: []string{"false"}, why: "nodeagent does not check the kernel's tunables"},
	"kernel-memcg-notification":                    {isBool: true, harmless: []string{"false"}, why: "memory pressure is observed every --eviction-monitoring-interval"},
	"local-storage-capacity-isolation":             {isBool: true, why: "ephemeral-storage limits are not enforced by eviction"},
	"experimental-allocatable-ignore-eviction":     {isBool: true, harmless: []string{"false"}, why: "the hard eviction thresholds come off the allocatable"},
	"contention-profiling":                         {isBool: true, harmless: []string{"false"}, why: "--profiling serves Go's profiles, without block profiling"},
	"exit-on-lock-contention":                      {isBool: true, why: "nodeagent takes no lock file"},
	"lock-file":                                    {why: "nodeagent takes no lock file"},
	"runonce":                                      {isBool: true, harmless: []string{"false"}, why: "nodeagent always runs as a daemon"},
	"config-dir":                                   {why: "put the settings in the one --config file"},
	"image-service-endpoint":                       {why: "nodeagent pulls images through --container-runtime-endpoint"},
	"cpu-cfs-quota-period":                         {why: "the CFS period is the kernel's default, 100ms"},
	"cpu-manager-policy":                           {harmless: []string{"none"}, why: "nodeagent has no CPU manager (the kubelet's policy none)"},
	"cpu-manager-policy-options":                   {why: "nodeagent has no CPU manager"},
	"cpu-manager-reconcile-period":                 {why: "nodeagent has no CPU manager"},
	"memory-manager-policy":                        {harmless: []string{"None"}, why: "nodeagent has no memory manager (the kubelet's policy None)"},
	"reserved-memory":                              {why: "nodeagent has no memory manager"},
	"reserved-cpus":                                {why: "nodeagent has no CPU manager; --system-reserved=cpu=... reserves CPU"},
	"topology-manager-policy":                      {harmless: []string{"none"}, why: "nodeagent has no topology manager (the kubelet's policy none)"},
	"topology-manager-policy-options":              {why: "nodeagent has no topology manager"},
	"topology-manager-scope":                       {why: "nodeagent has no topology manager"},
	"qos-reserved":                                 {why: "nodeagent reserves no memory from lower QoS classes"},
	"kube-reserved-cgroup":                         {why: "--kube-reserved comes off the allocatable but is not enforced on a cgroup"},
	"system-reserved-cgroup":                       {why: "--system-reserved comes off the allocatable but is not enforced on a cgroup"},
	"kubelet-cgroups":                              {why: "nodeagent stays in the cgroup its service manager starts it in"},
	"runtime-cgroups":                              {why: "nodeagent does not move the runtime's processes"},
	"system-cgroups":                               {why: "nodeagent does not move the system's processes"},
	"oom-score-adj":                                {why: "nodeagent keeps the OOM score its service manager gives it (OOMScoreAdjust=)"},
	"pod-max-pids":                                 {why: "nodeagent sets no per-pod PID limit"},
	"pods-per-core":                                {why: "--max-pods bounds the pods"},
	"pod-cidr":                                     {why: "pod networking is the CNI plugin's"},
	"hairpin-mode":                                 {why: "pod networking is the CNI plugin's"},
	"provider-id":                                  {why: "nodeagent registers its Node without a provider ID"},
	"node-status-max-images":                       {why: "the Node status lists the node's images as nodeagent bounds them"},
	"max-open-files":                               {why: "nodeagent keeps the open files limit its service manager gives it (LimitNOFILE=)"},
	"kube-api-qps":                                 {why: "nodeagent's client has its own fixed rate limits"},
	"kube-api-burst":                               {why: "nodeagent's client has its own fixed rate limits"},
	"kube-api-content-type":                        {why: "nodeagent's client speaks protobuf where it can"},
	"event-qps":                                    {why: "events are rate-limited by client-go's recorder"},
	"event-burst":                                  {why: "events are rate-limited by client-go's recorder"},
	"registry-qps":                                 {why: "image pulls are bounded by --serialize-image-pulls and --max-parallel-image-pulls"},
	"registry-burst":                               {why: "image pulls are bounded by --serialize-image-pulls and --max-parallel-image-pulls"},
	"streaming-connection-idle-timeout":            {why: "the runtime's streaming server closes idle connections"},
	"volume-plugin-dir":                            {why: "nodeagent has no FlexVolume plugins"},
	"volume-stats-agg-period":                      {why: "volume usage is measured when eviction or the summary asks"},
	"experimental-mounter-path":                    {why: "nodeagent mounts with the system's mount"},
	"maximum-dead-containers":                      {why: "nodeagent keeps one dead container per container, as the kubelet's defaults"},
	"maximum-dead-containers-per-container":        {why: "nodeagent keeps one dead container per container, as the kubelet's defaults"},
	"minimum-container-ttl-duration":               {why: "dead containers are removed by --housekeeping-interval"},
	"log-json-info-buffer-size":                    {why: "this build of nodeagent logs as text only"},
	"log-json-split-stream":                        {isBool: true, why: "this build of nodeagent logs as text only"},
}

// kubeletOnlyValue holds a kubelet-only flag's value until settle judges it.
type kubeletOnlyValue struct {
	value, typ string
}

func (v *kubeletOnlyValue) String() string     { return v.value }
func (v *kubeletOnlyValue) Set(s string) error { v.value = s; return nil }
func (v *kubeletOnlyValue) Type() string       { return v.typ }

// addKubeletFlags makes fs accept the kubelet's names: its own flags'
// under their kubelet names, and the others hidden, to be judged by
// checkKubeletFlags. It runs after every nodeagent flag is added, and a
// kubelet flag nodeagent has itself (or gains) stays nodeagent's.
func addKubeletFlags(fs *pflag.FlagSet) {
	for kubelet, own := range kubeletNames {
		if f := fs.Lookup(own); f != nil {
			f.Usage += " (kubelet: --" + kubelet + ")"
		}
	}
	if f := fs.Lookup("serve-address"); f != nil {
		f.Usage += " (kubelet: --" + healthzAddressFlag + " and --" + healthzPortFlag + ")"
	}
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if own, ok := kubeletNames[name]; ok {
			return pflag.NormalizedName(own)
		}
		return pflag.NormalizedName(name)
	})
	for name, k := range kubeletOnlyFlags {
		if fs.Lookup(name) != nil {
			continue
		}
		typ := "string"
		if k.isBool {
			typ = "bool"
		}
		f := fs.VarPF(&kubeletOnlyValue{typ: typ}, name, "", "a kubelet flag: "+k.why)
		if k.isBool {
			f.NoOptDefVal = "true"
		}
		f.Hidden = true
	}
}

// checkKubeletFlags judges the kubelet-only flags the command line gave:
// harmless ones are returned as notes for the log, the others refused
// with what nodeagent does instead. --healthz-bind-address and
// --healthz-port set --serve-address, unless it is given too.
func checkKubeletFlags(fs *pflag.FlagSet) (notes []string, err error) {
	var errs []error
	fs.Visit(func(f *pflag.Flag) {
		v, ok := f.Value.(*kubeletOnlyValue)
		k, known := kubeletOnlyFlags[f.Name]
		switch {
		case !ok || !known || f.Name == healthzAddressFlag || f.Name == healthzPortFlag:
		case slices.Contains(k.harmless, "*") || slices.Contains(k.harmless, v.value):
			notes = append(notes, fmt.Sprintf("--%s=%s is a kubelet flag nodeagent ignores: %s", f.Name, v.value, k.why))
		default:
			errs = append(errs, fmt.Errorf("--%s=%s is a kubelet flag nodeagent does not implement: %s", f.Name, v.value, k.why))
		}
	})
	if err := setServeAddressFromHealthz(fs); err != nil {
		errs = append(errs, err)
	}
	return notes, errors.Join(errs...)
}

// setServeAddressFromHealthz sets --serve-address from the kubelet's two
// flags; port 0 turns it off, as it does the kubelet's endpoint.
func setServeAddressFromHealthz(fs *pflag.FlagSet) error {
	addr, port := fs.Lookup(healthzAddressFlag), fs.Lookup(healthzPortFlag)
	if addr == nil || port == nil || (!addr.Changed && !port.Changed) {
		return nil
	}
	if fs.Changed("serve-address") {
		return fmt.Errorf("--%s and --%s are the kubelet's spelling of --serve-address: give one or the other", healthzAddressFlag, healthzPortFlag)
	}
	host, p, err := net.SplitHostPort(fs.Lookup("serve-address").Value.String())
	if err != nil {
		host, p = "127.0.0.1", "10248"
	}
	if addr.Changed {
		host = addr.Value.String()
	}
	if port.Changed {
		p = strings.TrimSpace(port.Value.String())
		if p == "0" {
			return fs.Set("serve-address", "")
		}
	}
	if err := fs.Set("serve-address", net.JoinHostPort(host, p)); err != nil {
		return fmt.Errorf("--%s/--%s: %w", healthzAddressFlag, healthzPortFlag, err)
	}
	return nil
}
