package nodeapi

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr/testr"
)

func TestSelfSignedCertificateIsKept(t *testing.T) {
	dir := t.TempDir()
	o := Options{CertDir: dir, NodeName: "node-1", Hostnames: []string{"host-a"}, IPs: []net.IP{net.ParseIP("192.0.2.7")}, Logger: testr.New(t)}
	first, err := o.servingCertificate()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(first.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("node-1"); err != nil {
		t.Error(err)
	}
	if err := leaf.VerifyHostname("192.0.2.7"); err != nil {
		t.Error(err)
	}
	second, err := o.servingCertificate()
	if err != nil {
		t.Fatal(err)
	}
	if string(second.Certificate[0]) != string(first.Certificate[0]) {
		t.Error("a second start made a new certificate")
	}
	if fi, err := os.Stat(filepath.Join(dir, selfSignedKey)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi.Mode(), err)
	}
}
