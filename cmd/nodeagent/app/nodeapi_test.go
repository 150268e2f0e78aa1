package app

import (
	"strings"
	"testing"
)

func TestNodeAPIOptionsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--address=localhost"}, `--address "localhost" is not an IP address`},
		{[]string{"--port=70000"}, "--port 70000 is not a port"},
		{[]string{"--tls-cert-file=/etc/a.crt"}, "--tls-cert-file and --tls-private-key-file go together"},
		{[]string{"--tls-min-version=VersionTLS99"}, "--tls-min-version: unknown tls version"},
		{[]string{"--tls-cipher-suites=TLS_NOPE"}, "--tls-cipher-suites: Cipher suite TLS_NOPE not supported"},
		{[]string{"--client-ca-file=/nonexistent/ca.crt"}, "--client-ca-file: stat /nonexistent/ca.crt"},
		{[]string{"--rotate-server-certificates", "--port=0"}, "--rotate-server-certificates needs the node API, which --port=0 disables"},
	} {
		_, err := parseArgs(t, append([]string{"--manifest-dir=/m", "--node-name=node1"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseArgs(t, "--manifest-dir=/m", "--node-name=node1", "--port=0", "--address=::1",
		"--tls-min-version=VersionTLS13", "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"); err != nil {
		t.Errorf("valid node API options refused: %v", err)
	}
	// As the kubelet: --tls-cert-file is served until the cluster issues one.
	o, err := parseArgs(t, "--manifest-dir=/m", "--node-name=node1", "--rotate-server-certificates",
		"--tls-cert-file=/etc/a.crt", "--tls-private-key-file=/etc/a.key")
	if err != nil {
		t.Errorf("--rotate-server-certificates with --tls-cert-file refused: %v", err)
	} else if !o.RotateServerCertificates {
		t.Error("--rotate-server-certificates not set")
	}
}
