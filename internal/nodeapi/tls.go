package nodeapi

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Names of the self-signed serving certificate and key in the cert dir.
const (
	selfSignedCert = "nodeagent-server.crt"
	selfSignedKey  = "nodeagent-server.key"
)

// servingCertificate loads the configured certificate, or the self-signed
// one in the cert dir, made on first use as the kubelet makes its own:
// a throwaway CA and a certificate for the node's names and addresses,
// valid a year. The apiserver does not check it unless it is given
// --kubelet-certificate-authority; then give the agent a certificate
// that CA signed.
func (o *Options) servingCertificate() (tls.Certificate, error) {
	certFile, keyFile := o.CertFile, o.KeyFile
	if certFile == "" {
		certFile, keyFile = filepath.Join(o.CertDir, selfSignedCert), filepath.Join(o.CertDir, selfSignedKey)
		if ok, _ := certutil.CanReadCertAndKey(certFile, keyFile); !ok {
			if err := o.makeSelfSigned(certFile, keyFile); err != nil {
				return tls.Certificate{}, err
			}
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("loading the serving certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}

func (o *Options) makeSelfSigned(certFile, keyFile string) error {
	host := o.NodeName
	if len(o.Hostnames) > 0 {
		host = o.Hostnames[0]
	}
	var dns []string
	for _, h := range append([]string{o.NodeName}, o.Hostnames...) {
		if h != host {
			dns = append(dns, h)
		}
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, o.IPs, dns)
	if err != nil {
		return fmt.Errorf("making a self-signed serving certificate: %w", err)
	}
	if err := os.MkdirAll(o.CertDir, 0o700); err != nil {
		return fmt.Errorf("creating the cert dir %s: %w", o.CertDir, err)
	}
	// The key first: a certificate without its key is remade next start.
	if err := keyutil.WriteKey(keyFile, keyPEM); err != nil {
		return fmt.Errorf("writing %s: %w", keyFile, err)
	}
	if err := certutil.WriteCert(certFile, certPEM); err != nil {
		return fmt.Errorf("writing %s: %w", certFile, err)
	}
	o.Logger.Info("made a self-signed serving certificate", "cert", certFile, "host", host, "ips", o.IPs)
	return nil
}

// tlsConfig serves the certificate getCert gives at each handshake, and
// asks clients for a certificate, which the authenticator verifies
// against the client CAs (clientCAs only tells clients which to send): a
// request without one may still carry a bearer token.
func (o *Options) tlsConfig(getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), clientCAs *x509.CertPool) *tls.Config {
	return &tls.Config{
		GetCertificate: getCert,
		MinVersion:     o.MinTLSVersion,
		CipherSuites:   o.CipherSuites,
		ClientAuth:     tls.RequestClientCert,
		ClientCAs:      clientCAs,
		NextProtos:     []string{"http/1.1"},
	}
}
