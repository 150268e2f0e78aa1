package nodeidentity

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
)

// servingStorePrefix names the serving pair files in the cert dir
// (kubelet-server-current.pem and its dated predecessors), as the
// kubelet's store does.
const servingStorePrefix = "kubelet-server"

// ServingOptions say how the node API's serving certificate is obtained
// from the cluster (--rotate-server-certificates).
type ServingOptions struct {
	// Addresses returns the node's addresses as the Node reports them
	// (status.addresses); the certificate is requested for its hostnames
	// and IPs, and again when they change. Until it returns an IP, no
	// certificate is requested, as the kubelet does. Required.
	Addresses func() []corev1.NodeAddress
	// CertFile and KeyFile (--tls-cert-file, --tls-private-key-file),
	// optional, are served until the cluster has issued a certificate,
	// as the kubelet does with both set; once one is stored in the cert
	// dir they are no longer read.
	CertFile, KeyFile string
	// Logger receives the requests and issues.
	Logger logr.Logger
	// Registry, if set, receives the serving certificate's metrics.
	Registry metrics.KubeRegistry
}

// validate reports every invalid option of a serving certificate kept in
// certDir at once, each wrapping ErrInvalidOptions and naming the field
// (and its flag).
func (o ServingOptions) validate(certDir string) error {
	var errs []error
	if o.Addresses == nil {
		errs = append(errs, fmt.Errorf("%w: serving certificate: Addresses, the source of the node's addresses, is required", ErrInvalidOptions))
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs = append(errs, fmt.Errorf("%w: serving certificate: CertFile and KeyFile (--tls-cert-file and --tls-private-key-file) go together", ErrInvalidOptions))
	}
	if certDir == "" {
		errs = append(errs, fmt.Errorf("%w: serving certificate: CertDir (--cert-dir) is required to keep it in", ErrInvalidOptions))
	}
	return errors.Join(errs...)
}

// Serving is the node API's serving certificate, requested from the
// cluster with the node's own identity (signer kubernetes.io/kubelet-serving)
// and renewed before it expires.
type Serving struct {
	log      logr.Logger
	mgr      certificate.Manager
	store    *noticeStore
	certPath string

	mu      sync.Mutex
	pending string // the CSR that awaits approval, if any
}

// NewServing prepares the serving certificate of the node named by id,
// stored in id's cert dir; requests start with Run. The pair stored by an
// earlier run is served at once while it is valid.
func (id *Identity) NewServing(opts ServingOptions) (*Serving, error) {
	if err := opts.validate(id.opts.CertDir); err != nil {
		return nil, err
	}
	certDir := id.opts.CertDir
	if err := checkWritableDir(certDir); err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	fileStore, err := certificate.NewFileStoreWithLogger(opts.Logger.V(2), servingStorePrefix, certDir, certDir, opts.CertFile, opts.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: cert dir %s: %w", certDir, err)
	}
	s := &Serving{log: opts.Logger, store: newNoticeStore(fileStore), certPath: fileStore.CurrentPath()}
	m := newServingMetrics(s.Current)
	nodeName := id.opts.NodeName
	// As for the client certificate: the context has no end, so the
	// manager starts nothing until Run.
	logCtx := klog.NewContext(context.Background(), opts.Logger)
	s.mgr, err = certificate.NewManager(&certificate.Config{
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) {
			// The node's own identity, whichever certificate it serves.
			c, err := id.opts.newClient(requestConfig(id.config))
			if err != nil {
				return nil, err
			}
			return csrNoticeClient{Interface: c, created: s.requested}, nil
		},
		GetTemplate:             func() *x509.CertificateRequest { return servingTemplate(nodeName, opts.Addresses()) },
		SignerName:              certificatesv1.KubeletServingSignerName,
		GetUsages:               certificate.DefaultKubeletServingGetUsages,
		CertificateStore:        s.store,
		CertificateRenewFailure: m.renewFailures,
		CertificateRotation:     m.rotationAge,
		Name:                    "node-serving",
		Ctx:                     &logCtx,
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificate manager (cert dir %s): %w", certDir, err)
	}
	if err := m.register(opts.Registry); err != nil {
		return nil, err
	}
	s.logSource(opts)
	return s, nil
}

// logSource says which certificate is served from the start.
func (s *Serving) logSource(opts ServingOptions) {
	stored := false
	if _, err := os.Stat(s.certPath); err == nil {
		stored = true
	}
	switch {
	case stored && opts.CertFile != "":
		s.log.Info("Serving the certificate the cluster issued; --tls-cert-file is not used with --rotate-server-certificates once one is stored",
			"certificate", s.certPath, "unused", opts.CertFile)
	case stored:
		s.log.Info("Serving the certificate the cluster issued", "certificate", s.certPath)
	case opts.CertFile != "":
		s.log.Info("Serving --tls-cert-file until the cluster issues a certificate (--rotate-server-certificates)",
			"certFile", opts.CertFile, "then", s.certPath)
	default:
		s.log.Info("No serving certificate yet: the node API refuses TLS handshakes until the cluster issues one",
			"certDir", filepath.Dir(s.certPath))
	}
}

// Current is the certificate to serve; nil before one is issued, or once
// it has expired.
func (s *Serving) Current() *tls.Certificate { return s.mgr.Current() }

// GetCertificate serves Current at each TLS handshake (tls.Config's
// GetCertificate), so a renewed certificate is used on the next one. With
// none, the handshake fails with an error that says why.
func (s *Serving) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.Current(); c != nil {
		return c, nil
	}
	s.mu.Lock()
	pending := s.pending
	s.mu.Unlock()
	if pending != "" {
		return nil, fmt.Errorf("no serving certificate yet: CertificateSigningRequest %s (signer %s) awaits approval",
			pending, certificatesv1.KubeletServingSignerName)
	}
	return nil, fmt.Errorf("no valid serving certificate (none issued yet, or it expired) and no CSR pending for signer %s: none is requested before the Node reports an IP address",
		certificatesv1.KubeletServingSignerName)
}

// Run requests the certificate when there is none, renews it at 70 to 90 %
// of its life or when the node's addresses change, and logs each issue,
// until ctx ends. Call it once.
func (s *Serving) Run(ctx context.Context) error {
	s.mgr.Start()
	defer s.mgr.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-s.store.stored:
			s.mu.Lock()
			csr := s.pending
			s.pending = ""
			s.mu.Unlock()
			s.log.Info("Serving certificate issued; new TLS handshakes use it",
				"csr", csr, "certificate", s.certPath, "notAfter", c.Leaf.NotAfter, "dnsNames", c.Leaf.DNSNames, "ips", c.Leaf.IPAddresses)
		}
	}
}

// requested notes a CSR just created and logs, once for it, that it waits
// for someone to approve it.
func (s *Serving) requested(csr *certificatesv1.CertificateSigningRequest) {
	s.mu.Lock()
	s.pending = csr.Name
	s.mu.Unlock()
	s.log.Info("Requested a serving certificate for the node API: the CSR awaits approval "+
		"(the controller-manager does not approve kubelet-serving CSRs: an operator, e.g. `kubectl certificate approve`, or an approver does)",
		"csr", csr.Name, "signer", csr.Spec.SignerName)
}
