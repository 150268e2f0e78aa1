package configfile

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// kubeletField is one KubeletConfiguration field that nodeagent
// implements, and the flag that holds it. The table below is the one
// mapping between the two: a KubeletConfiguration file is read through it
// into the flags, and nodeagent's /configz is written through it from
// them.
type kubeletField struct {
	// Path is the field's JSON path, dot-separated (authentication.x509.clientCAFile).
	Path string
	// Flag is the nodeagent flag of the same meaning.
	Flag string
	// Spelling is how the field's value is written as the flag's.
	Spelling spelling
	// ReadOnly fields are read from a file but not shown by /configz,
	// which writes them otherwise (logging, whole) or leaves them out
	// (the manifest URL's headers: credentials).
	ReadOnly bool
}

// spelling is how a field's JSON value becomes a flag's value.
type spelling int

const (
	// plain: a scalar is the flag's value; a list sets the flag once per
	// item; a map is key=value,key=value.
	plain spelling = iota
	// thresholds: a map of eviction signals to values, written
	// signal<value,signal<value as the eviction threshold flags take them.
	thresholds
	// joinedMap: a map written key=value,key=value into a string flag
	// (a map flag's own type is plain).
	joinedMap
	// taints: a list of taint objects, each written key=value:Effect.
	taints
	// headers: a map of header names to lists of values, each written
	// Name:value, the kubelet's syntax of --manifest-url-header.
	headers
	// vModule: a list of {filePattern, verbosity}, written pattern=N,...
	vModule
	// flushFrequency: a duration, or a number of nanoseconds.
	flushFrequency
)

// kubeletFields are the KubeletConfiguration fields nodeagent implements.
// healthzBindAddress and healthzPort, which are together one flag
// (--serve-address), are read and written beside the table.
var kubeletFields = []kubeletField{
	{Path: "staticPodPath", Flag: "manifest-dir"},
	{Path: "staticPodURL", Flag: "manifest-url"},
	{Path: "staticPodURLHeader", Flag: "manifest-url-header", Spelling: headers, ReadOnly: true},
	{Path: "fileCheckFrequency", Flag: "file-check-frequency"},
	{Path: "httpCheckFrequency", Flag: "http-check-frequency"},
	{Path: "syncFrequency", Flag: "sync-frequency"},
	{Path: "containerRuntimeEndpoint", Flag: "cri-endpoint"},
	{Path: "runtimeRequestTimeout", Flag: "runtime-request-timeout"},
	{Path: "podLogsDir", Flag: "pod-log-dir"},
	{Path: "containerLogMaxSize", Flag: "container-log-max-size"},
	{Path: "containerLogMaxFiles", Flag: "container-log-max-files"},
	{Path: "containerLogMaxWorkers", Flag: "container-log-max-workers"},
	{Path: "containerLogMonitorInterval", Flag: "container-log-monitor-interval"},
	{Path: "cgroupRoot", Flag: "cgroup-root"},
	{Path: "cgroupDriver", Flag: "cgroup-driver"},
	{Path: "allowedUnsafeSysctls", Flag: "allowed-unsafe-sysctls"},
	{Path: "clusterDNS", Flag: "cluster-dns"},
	{Path: "clusterDomain", Flag: "cluster-domain"},
	{Path: "resolvConf", Flag: "resolv-conf"},
	{Path: "serializeImagePulls", Flag: "serialize-image-pulls"},
	{Path: "maxParallelImagePulls", Flag: "max-parallel-image-pulls"},
	{Path: "imagePullCredentialsVerificationPolicy", Flag: "image-pull-credentials-verification-policy"},
	{Path: "preloadedImagesVerificationAllowlist", Flag: "preloaded-images-verification-allowlist"},
	{Path: "imageGCHighThresholdPercent", Flag: "image-gc-high-threshold"},
	{Path: "imageGCLowThresholdPercent", Flag: "image-gc-low-threshold"},
	{Path: "imageMinimumGCAge", Flag: "image-minimum-gc-age"},
	{Path: "imageMaximumGCAge", Flag: "image-maximum-gc-age"},
	{Path: "evictionHard", Flag: "eviction-hard", Spelling: thresholds},
	{Path: "evictionSoft", Flag: "eviction-soft", Spelling: thresholds},
	{Path: "evictionSoftGracePeriod", Flag: "eviction-soft-grace-period", Spelling: joinedMap},
	{Path: "evictionMinimumReclaim", Flag: "eviction-minimum-reclaim", Spelling: joinedMap},
	{Path: "evictionMaxPodGracePeriod", Flag: "eviction-max-pod-grace-period"},
	{Path: "evictionPressureTransitionPeriod", Flag: "eviction-pressure-transition-period"},
	{Path: "rotateCertificates", Flag: "rotate-certificates"},
	{Path: "serverTLSBootstrap", Flag: "rotate-server-certificates"},
	{Path: "registerWithTaints", Flag: "register-with-taints", Spelling: taints},
	{Path: "systemReserved", Flag: "system-reserved"},
	{Path: "kubeReserved", Flag: "kube-reserved"},
	{Path: "maxPods", Flag: "max-pods"},
	{Path: "nodeStatusUpdateFrequency", Flag: "node-status-update-frequency"},
	{Path: "nodeStatusReportFrequency", Flag: "node-status-report-frequency"},
	{Path: "nodeLeaseDurationSeconds", Flag: "node-lease-duration-seconds"},
	{Path: "configMapAndSecretChangeDetectionStrategy", Flag: "config-map-and-secret-change-detection-strategy"},
	{Path: "address", Flag: "address"},
	{Path: "port", Flag: "port"},
	{Path: "tlsCertFile", Flag: "tls-cert-file"},
	{Path: "tlsPrivateKeyFile", Flag: "tls-private-key-file"},
	{Path: "tlsMinVersion", Flag: "tls-min-version"},
	{Path: "tlsCipherSuites", Flag: "tls-cipher-suites"},
	{Path: "authentication.x509.clientCAFile", Flag: "client-ca-file"},
	{Path: "enableProfilingHandler", Flag: "enable-profiling-handler"},
	{Path: "enableSystemLogHandler", Flag: "enable-system-log-handler"},
	{Path: "logging.format", Flag: "logging-format", ReadOnly: true},
	{Path: "logging.verbosity", Flag: "v", ReadOnly: true},
	{Path: "logging.vmodule", Flag: "vmodule", Spelling: vModule, ReadOnly: true},
	{Path: "logging.flushFrequency", Flag: "log-flush-frequency", Spelling: flushFrequency, ReadOnly: true},
	{Path: "logging.options.json.splitStream", Flag: "log-json-split-stream", ReadOnly: true},
	{Path: "logging.options.json.infoBufferSize", Flag: "log-json-info-buffer-size", ReadOnly: true},
	{Path: "logging.options.text.splitStream", Flag: "log-text-split-stream", ReadOnly: true},
	{Path: "logging.options.text.infoBufferSize", Flag: "log-text-info-buffer-size", ReadOnly: true},
}

// The health endpoint's address: two fields, one flag.
const (
	healthzAddressPath = "healthzBindAddress"
	healthzPortPath    = "healthzPort"
	healthzFlag        = "serve-address"
)

// harmlessFields are fields nodeagent does not hold as settings, at the
// values that describe what it does anyway: a file setting one of them
// so is read, and the field named once in the log.
var harmlessFields = map[string]struct {
	values []string // the field's JSON values that are harmless
	why    string
}{
	"enableDebuggingHandlers":                    {[]string{"true"}, "the node API serves logs, exec, attach and port-forward"},
	"enableServer":                               {[]string{"true"}, "the node API is served (--port)"},
	"registerNode":                               {[]string{"true"}, "a connected agent registers its Node"},
	"authentication.anonymous.enabled":           {[]string{"false"}, "the node API refuses anonymous requests"},
	"authentication.webhook.enabled":             {[]string{"true"}, "the node API reviews bearer tokens with the apiserver"},
	"authentication.webhook.cacheTTL":            {[]string{`"2m0s"`, `"2m"`}, "token reviews are cached 2 minutes"},
	"authorization.mode":                         {[]string{`"Webhook"`}, "the node API asks the apiserver (SubjectAccessReview)"},
	"authorization.webhook.cacheAuthorizedTTL":   {[]string{`"5m0s"`, `"5m"`}, "allowed reviews are cached 5 minutes"},
	"authorization.webhook.cacheUnauthorizedTTL": {[]string{`"30s"`}, "denied reviews are cached 30 seconds"},
	"failCgroupV1":                               {[]string{"false"}, "nodeagent runs on cgroup v1 and v2"},
	"failSwapOn":                                 {[]string{"false"}, "nodeagent does not check for swap"},
	"cgroupsPerQOS":                              {[]string{"true"}, "pods are placed in the kubelet's QoS cgroup tree"},
	"enforceNodeAllocatable":                     {[]string{`["pods"]`}, "the pods' cgroup is bounded by the allocatable"},
	"cpuCFSQuota":                                {[]string{"true"}, "CPU limits are CFS quotas"},
	"makeIPTablesUtilChains":                     {[]string{"false"}, "nodeagent makes no iptables chains"},
	"enableControllerAttachDetach":               {[]string{"true"}, "nodeagent attaches no volumes; the controller-manager does"},
	"seccompDefault":                             {[]string{"false"}, "containers without a seccomp profile run Unconfined"},
	"memorySwap.swapBehavior":                    {[]string{`"NoSwap"`}, "containers get no swap"},
}

// unimplementedWhy says, for some fields nodeagent does not implement,
// what it does instead; the others get a general sentence.
var unimplementedWhy = map[string]string{
	"featureGates":                     "nodeagent has no feature gates: each feature has a flag of its own (see --help)",
	"readOnlyPort":                     "nodeagent serves no unauthenticated read-only port",
	"authentication.anonymous.enabled": "the node API refuses anonymous requests",
	"authentication.webhook.enabled":   "the node API always reviews bearer tokens with the apiserver",
	"authorization.mode":               "the node API always asks the apiserver (Webhook)",
	"kubeAPIQPS":                       "nodeagent's client has its own fixed rate limits",
	"kubeAPIBurst":                     "nodeagent's client has its own fixed rate limits",
	"cpuManagerPolicy":                 "nodeagent has no CPU manager",
	"memoryManagerPolicy":              "nodeagent has no memory manager",
	"topologyManagerPolicy":            "nodeagent has no topology manager",
	"podPidsLimit":                     "nodeagent sets no pod PID limit",
	"shutdownGracePeriod":              "nodeagent has no graceful node shutdown: stopping it leaves the pods running",
	"tracing":                          "nodeagent exports no traces",
	"imageServiceEndpoint":             "nodeagent pulls images through the runtime endpoint (containerRuntimeEndpoint)",
}

// FieldsFromFlags is the table read the other way, for /configz: the
// nested JSON object of the fields whose flags fs has, with the flags'
// values; fields whose flag is empty are left out.
func FieldsFromFlags(fs *pflag.FlagSet) map[string]any {
	out := map[string]any{}
	for _, e := range kubeletFields {
		f := fs.Lookup(e.Flag)
		if f == nil || e.ReadOnly {
			continue
		}
		if v := fieldValue(e.Spelling, f.Value); v != nil {
			setPath(out, strings.Split(e.Path, "."), v)
		}
	}
	return out
}

// fieldValue is a flag's value as its field's JSON value, nil if empty.
func fieldValue(s spelling, v pflag.Value) any {
	text := v.String()
	switch s {
	case thresholds, joinedMap:
		sep := "="
		if s == thresholds {
			sep = "<"
		}
		return splitMap(text, sep)
	case taints:
		var out []any
		for _, t := range sliceOf(v) {
			kv, effect, _ := strings.Cut(t, ":")
			k, val, _ := strings.Cut(kv, "=")
			out = append(out, map[string]any{"key": k, "value": val, "effect": effect})
		}
		return out
	}
	switch v.Type() {
	case "bool":
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil
		}
		return b
	case "int", "int32", "int64":
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil
		}
		return n
	case "stringToString":
		return splitMap(strings.Trim(text, "[]"), "=")
	}
	if s, ok := v.(pflag.SliceValue); ok {
		if items := s.GetSlice(); len(items) > 0 {
			return items
		}
		return nil
	}
	if text == "" {
		return nil
	}
	return text
}

func sliceOf(v pflag.Value) []string {
	if s, ok := v.(pflag.SliceValue); ok {
		return s.GetSlice()
	}
	return nil
}

// splitMap reads key<sep>value,... as a map; nil if there is none.
func splitMap(list, sep string) map[string]any {
	var m map[string]any
	for item := range strings.SplitSeq(list, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(item), sep); ok {
			if m == nil {
				m = map[string]any{}
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[path[len(path)-1]] = v
}
