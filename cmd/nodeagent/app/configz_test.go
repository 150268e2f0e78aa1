package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestKubeletConfig(t *testing.T) {
	o := NewOptions()
	o.ManifestDir = "/etc/nodeagent/manifests"
	o.ManifestURL = "https://user:secret@example.com/pods"
	o.SyncFrequency = 42 * time.Second
	o.ClientCAFile = "/etc/ca.crt"
	o.Eviction.Hard = "memory.available<100Mi, nodefs.available<10%"
	o.Eviction.SoftGracePeriods = "memory.available=1m30s"
	o.EnableProfilingHandler = false
	o.RotateServerCertificates = true

	raw, err := json.Marshal(o.kubeletConfig())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"kind":                                   "KubeletConfiguration",
		"apiVersion":                             "kubelet.config.k8s.io/v1beta1",
		"staticPodPath":                          "/etc/nodeagent/manifests",
		"syncFrequency":                          "42s",
		"port":                                   float64(10250),
		"healthzBindAddress":                     "127.0.0.1",
		"healthzPort":                            float64(10248),
		"enableProfilingHandler":                 false,
		"enableSystemLogHandler":                 true,
		"serverTLSBootstrap":                     true,
		"imagePullCredentialsVerificationPolicy": "NeverVerifyPreloadedImages",
		"evictionHard":                           map[string]any{"memory.available": "100Mi", "nodefs.available": "10%"},
		"evictionSoftGracePeriod":                map[string]any{"memory.available": "1m30s"},
		"authentication": map[string]any{
			"x509": map[string]any{"clientCAFile": "/etc/ca.crt"}, "webhook": map[string]any{"enabled": true, "cacheTTL": "2m0s"},
			"anonymous": map[string]any{"enabled": false},
		},
		"authorization": map[string]any{
			"mode": "Webhook", "webhook": map[string]any{"cacheAuthorizedTTL": "5m0s", "cacheUnauthorizedTTL": "30s"},
		},
	}
	for k, v := range want {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	if strings.Contains(string(raw), "secret") {
		t.Errorf("the manifest URL's credentials are shown: %s", got["staticPodURL"])
	}
	// nodeagent's own settings have no field there.
	for _, k := range []string{"rootDir", "relistInterval", "staticPodURLHeader", "evictionSoft"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s is shown: %v", k, got[k])
		}
	}
}
