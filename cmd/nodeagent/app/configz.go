package app

import (
	"net"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/nodeapi"
	"github.com/nodeagent/nodeagent/staging/config"
)

// kubeletConfig is the agent's effective configuration as the node API's
// /configz shows it: a KubeletConfiguration holding only the settings
// whose meaning nodeagent shares with the kubelet's, under their names.
// The settings of its own (--root-dir, --relist-interval, --node-labels
// ...) have no field there, and a field with no setting here stays empty.
// --manifest-url's credentials are redacted, and its headers left out.
func (o *Options) kubeletConfig() *kubeletconfigv1beta1.KubeletConfiguration {
	c := &kubeletconfigv1beta1.KubeletConfiguration{
		StaticPodPath:                             o.ManifestDir,
		StaticPodURL:                              config.RedactURL(o.ManifestURL),
		FileCheckFrequency:                        duration(o.FileCheckFrequency),
		HTTPCheckFrequency:                        duration(o.HTTPCheckFrequency),
		SyncFrequency:                             duration(o.SyncFrequency),
		ContainerRuntimeEndpoint:                  o.CRIEndpoint,
		RuntimeRequestTimeout:                     duration(o.RuntimeRequestTimeout),
		PodLogsDir:                                o.PodLogDir,
		ContainerLogMaxSize:                       o.ContainerLogs.MaxSize,
		ContainerLogMaxFiles:                      ptr.To(int32(o.ContainerLogs.MaxFiles)),   // #nosec G115 -- validated small
		ContainerLogMaxWorkers:                    ptr.To(int32(o.ContainerLogs.MaxWorkers)), // #nosec G115 -- validated small
		ContainerLogMonitorInterval:               ptr.To(duration(o.ContainerLogs.MonitorInterval)),
		CgroupRoot:                                o.CgroupRoot,
		CgroupDriver:                              o.CgroupDriver,
		AllowedUnsafeSysctls:                      o.AllowedUnsafeSysctls,
		ClusterDNS:                                o.ClusterDNS,
		ClusterDomain:                             o.ClusterDomain,
		ResolverConfig:                            ptr.To(o.ResolvConf),
		SerializeImagePulls:                       ptr.To(o.ImagePulls.Serialize),
		ImageGCHighThresholdPercent:               ptr.To(int32(o.ImageGC.HighThresholdPercent)), // #nosec G115 -- a percentage
		ImageGCLowThresholdPercent:                ptr.To(int32(o.ImageGC.LowThresholdPercent)),  // #nosec G115 -- a percentage
		ImageMinimumGCAge:                         duration(o.ImageGC.MinAge),
		ImageMaximumGCAge:                         duration(o.ImageGC.MaxAge),
		EvictionHard:                              signalMap(o.Eviction.Hard, "<"),
		EvictionSoft:                              signalMap(o.Eviction.Soft, "<"),
		EvictionSoftGracePeriod:                   signalMap(o.Eviction.SoftGracePeriods, "="),
		EvictionMinimumReclaim:                    signalMap(o.Eviction.MinimumReclaim, "="),
		EvictionMaxPodGracePeriod:                 int32(max(min(o.Eviction.MaxPodGracePeriod, 1<<31-1), -1<<31)), // #nosec G115 -- clamped
		EvictionPressureTransitionPeriod:          duration(o.Eviction.PressureTransition),
		RotateCertificates:                        o.RotateCertificates,
		SystemReserved:                            o.SystemReserved,
		KubeReserved:                              o.KubeReserved,
		MaxPods:                                   o.MaxPods,
		NodeStatusUpdateFrequency:                 duration(o.NodeStatusUpdateFrequency),
		NodeStatusReportFrequency:                 duration(o.NodeStatusReportFrequency),
		NodeLeaseDurationSeconds:                  o.NodeLeaseDurationSeconds,
		ConfigMapAndSecretChangeDetectionStrategy: kubeletconfigv1beta1.ResourceChangeDetectionStrategy(o.ObjectChangeDetection),
		Address:                                   o.Address,
		Port:                                      o.Port,
		TLSCertFile:                               o.TLSCertFile,
		TLSPrivateKeyFile:                         o.TLSPrivateKeyFile,
		TLSMinVersion:                             o.TLSMinVersion,
		TLSCipherSuites:                           o.TLSCipherSuites,
		EnableDebuggingHandlers:                   ptr.To(true), // logs, exec, attach, port-forward
		EnableProfilingHandler:                    ptr.To(o.EnableProfilingHandler),
		EnableSystemLogHandler:                    ptr.To(o.EnableSystemLogHandler),
		ServerTLSBootstrap:                        o.RotateServerCertificates,
		ImagePullCredentialsVerificationPolicy:    kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy(o.ImagePulls.VerifyPolicy),
		PreloadedImagesVerificationAllowlist:      o.ImagePulls.VerifyAllowlist,
		// Requests are authenticated and authorized as the kubelet's
		// webhook modes do it, anonymous ones refused.
		Authentication: kubeletconfigv1beta1.KubeletAuthentication{
			X509:      kubeletconfigv1beta1.KubeletX509Authentication{ClientCAFile: o.ClientCAFile},
			Webhook:   kubeletconfigv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true), CacheTTL: duration(nodeapi.TokenCacheTTL)},
			Anonymous: kubeletconfigv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		Authorization: kubeletconfigv1beta1.KubeletAuthorization{
			Mode: kubeletconfigv1beta1.KubeletAuthorizationModeWebhook,
			Webhook: kubeletconfigv1beta1.KubeletWebhookAuthorization{
				CacheAuthorizedTTL: duration(nodeapi.AllowCacheTTL), CacheUnauthorizedTTL: duration(nodeapi.DenyCacheTTL),
			},
		},
	}
	c.APIVersion, c.Kind = kubeletconfigv1beta1.SchemeGroupVersion.String(), "KubeletConfiguration"
	if !o.ImagePulls.Serialize && o.ImagePulls.MaxParallel > 0 {
		c.MaxParallelImagePulls = ptr.To(int32(min(o.ImagePulls.MaxParallel, 1<<31-1))) // #nosec G115 -- clamped
	}
	if host, port, err := net.SplitHostPort(o.ServeAddress); err == nil {
		if p, err := strconv.ParseInt(port, 10, 32); err == nil {
			c.HealthzBindAddress, c.HealthzPort = host, ptr.To(int32(p))
		}
	}
	if o.Logging != nil {
		c.Logging = *o.Logging
	}
	return c
}

func duration(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// signalMap splits an eviction flag's signal<value (or signal=value)
// list into the kubelet's map of them; the flags are validated.
func signalMap(list, sep string) map[string]string {
	var m map[string]string
	for item := range strings.SplitSeq(list, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(item), sep); ok {
			if m == nil {
				m = map[string]string{}
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}
