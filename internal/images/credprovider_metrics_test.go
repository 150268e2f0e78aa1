package images

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/component-base/metrics/testutil"
)

// TestCredentialProviderMetrics: each plugin run is timed and a failed
// run counted, under the kubelet's names and plugin_name label; an answer
// the agent refuses is not a failed run, as in the kubelet; the config's
// hash is the kubelet's.
func TestCredentialProviderMetrics(t *testing.T) {
	p := newTestPlugin(t, `["*.example.com"]`, "0s") // nothing cached: each lookup runs
	p.respond("Image", "", `{"*.example.com": {"username": "u", "password": "p"}}`)
	wantRuns := func(runs, failed int) {
		t.Helper()
		h, err := testutil.GetHistogramVecFromGatherer(p.reg, "kubelet_credential_provider_plugin_duration", map[string]string{"plugin_name": "test-plugin"})
		if err != nil {
			t.Fatal(err)
		}
		if got := h.GetAggregatedSampleCount(); got != uint64(runs) {
			t.Errorf("%d runs timed, want %d", got, runs)
		}
		want := ""
		if failed > 0 {
			want = fmt.Sprintf(`# HELP kubelet_credential_provider_plugin_errors_total [ALPHA] Credential provider plugin runs that failed (killed at the timeout, a non-zero exit, an answer over the size bound), by plugin.
# TYPE kubelet_credential_provider_plugin_errors_total counter
kubelet_credential_provider_plugin_errors_total{plugin_name="test-plugin"} %d
`, failed)
		}
		if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want), "kubelet_credential_provider_plugin_errors_total"); err != nil {
			t.Error(err)
		}
	}
	if len(p.lookup("a.example.com/app")) == 0 {
		t.Fatal("no credentials from the plugin")
	}
	wantRuns(1, 0)
	p.then(`exit 3`)
	p.lookup("a.example.com/app")
	wantRuns(2, 1)
	p.then(`echo "not JSON"`)
	p.lookup("a.example.com/app")
	wantRuns(3, 1)
	p.lookup("b.other.io/app") // not the plugin's: no run
	wantRuns(3, 1)

	data, err := os.ReadFile(filepath.Join(p.dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	_ = binary.Write(h, binary.BigEndian, uint64(len(data)))
	h.Write(data)
	want := fmt.Sprintf(`# HELP kubelet_credential_provider_config_info [ALPHA] The credential provider config the agent started with, its hash (sha256 of its files) as a label.
# TYPE kubelet_credential_provider_config_info gauge
kubelet_credential_provider_config_info{hash="sha256:%x"} 1
`, h.Sum(nil))
	if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want), "kubelet_credential_provider_config_info"); err != nil {
		t.Error(err)
	}
}
