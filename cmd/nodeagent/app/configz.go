package app

import (
	"encoding/json"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/configfile"
	"github.com/nodeagent/nodeagent/internal/nodeapi"
	"github.com/nodeagent/nodeagent/staging/config"
)

// kubeletConfig is the agent's effective configuration as the node API's
// /configz shows it: a KubeletConfiguration holding only the settings
// whose meaning nodeagent shares with the kubelet's, under their names,
// written through configfile's kubeletFields, the table a
// KubeletConfiguration --config file is read through. The settings of its
// own (--root-dir, --relist-interval, --node-labels ...) have no field
// there, and a field with no setting here stays empty. --manifest-url's
// credentials are redacted, and its headers left out.
func (o *Options) kubeletConfig() *kubeletconfigv1beta1.KubeletConfiguration {
	c := &kubeletconfigv1beta1.KubeletConfiguration{
		EnableDebuggingHandlers: ptr.To(true), // logs, exec, attach, port-forward
		// Requests are authenticated and authorized as the kubelet's
		// webhook modes do it, anonymous ones refused.
		Authentication: kubeletconfigv1beta1.KubeletAuthentication{
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
	// The flags are bound to a copy, whose fields they write their
	// defaults to: o is read by the running agent.
	view := *o
	view.Logging = logsapi.NewLoggingConfiguration()
	fs := pflag.NewFlagSet("configz", pflag.ContinueOnError)
	view.AddFlags(fs)
	for field, value := range configfile.FieldsFromFlags(fs) {
		// One field at a time: a value out of its field's range (an
		// int64 flag, an int32 field) leaves that field out, not all.
		if raw, err := json.Marshal(map[string]any{field: value}); err == nil {
			_ = json.Unmarshal(raw, c)
		}
	}
	c.StaticPodURL = config.RedactURL(o.ManifestURL)
	c.APIVersion, c.Kind = kubeletconfigv1beta1.SchemeGroupVersion.String(), "KubeletConfiguration"
	if o.ImagePulls.Serialize || o.ImagePulls.MaxParallel <= 0 {
		c.MaxParallelImagePulls = nil // the kubelet's field holds a bound only
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
