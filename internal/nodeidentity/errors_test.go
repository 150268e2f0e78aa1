package nodeidentity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Every refusal names the file or the CSR and says why, and none submits
// a CSR it cannot use.
func TestErrorsNameFileAndReason(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *env, o *Options)
		want  []string // substrings of the error; "$kubeconfig" etc. are replaced
	}{{
		name: "kubeconfig unreadable",
		setup: func(t *testing.T, e *env, o *Options) {
			if err := os.MkdirAll(e.kubeconfig, 0o700); err != nil { // a directory cannot be read as a file
				t.Fatal(err)
			}
		},
		want: []string{"kubeconfig", "$kubeconfig", "is a directory"},
	}, {
		name: "kubeconfig too large",
		setup: func(t *testing.T, e *env, o *Options) {
			if err := os.MkdirAll(filepath.Dir(e.kubeconfig), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(e.kubeconfig, make([]byte, maxKubeconfigBytes+1), 0o600); err != nil {
				t.Fatal(err)
			}
			o.BootstrapKubeconfig = ""
		},
		want: []string{"$kubeconfig", "larger than"},
	}, {
		name: "kubeconfig without server",
		setup: func(t *testing.T, e *env, o *Options) {
			writeKubeconfig(t, e.kubeconfig, "", nil, &clientcmdapi.AuthInfo{Token: "t"})
			o.BootstrapKubeconfig = ""
		},
		want: []string{"$kubeconfig", `cluster "c": no server`, "no bootstrap kubeconfig"},
	}, {
		name: "kubeconfig with an exec plugin",
		setup: func(t *testing.T, e *env, o *Options) {
			writeKubeconfig(t, e.kubeconfig, e.server.URL, nil, &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "x"}})
			o.BootstrapKubeconfig = ""
		},
		want: []string{"$kubeconfig", "only a client certificate or a token"},
	}, {
		name: "kubeconfig naming a missing certificate",
		setup: func(t *testing.T, e *env, o *Options) {
			writeKubeconfig(t, e.kubeconfig, e.server.URL, nil, &clientcmdapi.AuthInfo{ClientCertificate: "gone.pem", ClientKey: "gone.pem"})
			o.BootstrapKubeconfig = ""
		},
		want: []string{"$kubeconfig", filepath.Join("etc", "gone.pem"), "no such file"},
	}, {
		name: "no kubeconfig, no bootstrap",
		setup: func(t *testing.T, e *env, o *Options) {
			o.BootstrapKubeconfig = ""
		},
		want: []string{"$kubeconfig", "no such file", "no bootstrap kubeconfig"},
	}, {
		name: "bootstrap kubeconfig missing",
		setup: func(t *testing.T, e *env, o *Options) {
			o.BootstrapKubeconfig = filepath.Join(e.dir, "nope.conf")
		},
		want: []string{"bootstrap kubeconfig", "nope.conf", "no such file"},
	}, {
		name: "cert dir not writable",
		setup: func(t *testing.T, e *env, o *Options) {
			file := filepath.Join(e.dir, "file")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			o.CertDir = filepath.Join(file, "pki") // under a file: nothing can be made there, even by root
		},
		want: []string{"cert dir", "file/pki", "not a directory"},
	}, {
		name: "bootstrap token refused",
		setup: func(t *testing.T, e *env, o *Options) {
			e.cp.setRefusal(apierrors.NewUnauthorized("token expired"), 0)
		},
		want: []string{"bootstrap kubeconfig", "$bootstrap", "refused its credentials"},
	}, {
		name: "bootstrap user may not create CSRs",
		setup: func(t *testing.T, e *env, o *Options) {
			e.cp.setRefusal(apierrors.NewForbidden(certificatesResource, "", nil), 0)
		},
		want: []string{"$bootstrap", "may not create certificate signing requests"},
	}, {
		name: "CSR never approved",
		setup: func(t *testing.T, e *env, o *Options) {
			e.cp.ignore = true
			o.BootstrapTimeout = 500 * time.Millisecond
		},
		want: []string{"CSR node-csr-", `node "node-1"`, "not approved and signed within 500ms", "kubectl certificate approve"},
	}, {
		name:  "no node name",
		setup: func(t *testing.T, e *env, o *Options) { o.NodeName = "" },
		want:  []string{"NodeName is required"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			o := e.options()
			o.Logger = testLogger(t)
			tc.setup(t, e, &o)
			_, err := New(t.Context(), o)
			if err == nil {
				t.Fatal("New succeeded")
			}
			for _, w := range tc.want {
				w = strings.NewReplacer("$kubeconfig", e.kubeconfig, "$bootstrap", e.bootstrap).Replace(w)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.name != "CSR never approved" && len(e.cp.submitted()) != 0 {
				t.Errorf("CSR submitted")
			}
		})
	}
}

// A CSR still pending when the bound passes keeps its key: the next start
// asks for the same CSR, which may have been approved meanwhile.
func TestPendingCSRKeepsItsKey(t *testing.T) {
	e := newEnv(t)
	e.cp.ignore = true
	o := e.options()
	o.Logger = testLogger(t)
	o.BootstrapTimeout = 300 * time.Millisecond
	if _, err := New(t.Context(), o); err == nil {
		t.Fatal("New succeeded with a pending CSR")
	}
	if _, err := os.Stat(filepath.Join(e.certDir, pendingKeyFile)); err != nil {
		t.Errorf("pending key: %v", err)
	}
	e.cp.ignore = false
	if _, err := New(t.Context(), o); err != nil {
		// The fake signs only on create; the same CSR is found again, still
		// pending, so this start times out too, without a second CSR.
		t.Logf("second start: %v", err)
	}
	if n := e.cp.csrCount(t); n != 1 {
		t.Errorf("CSRs after two starts: %d, want 1", n)
	}
}

// While the apiserver cannot answer, the CSR is submitted again with
// backoff, and bootstrapping succeeds once it can.
func TestSubmitRetriesWhileTheAPIServerIsAway(t *testing.T) {
	e := newEnv(t)
	e.cp.setRefusal(apierrors.NewServiceUnavailable("starting"), 2)
	start := time.Now()
	newIdentity(t, e.options())
	if n := len(e.cp.submitted()); n != 1 {
		t.Errorf("CSRs: %d, want 1", n)
	}
	// Two refusals: waits of about 1 s and 2 s (jitter 20 %).
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("succeeded after %v: no backoff", d)
	}
}
