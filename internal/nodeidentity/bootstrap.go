package nodeidentity

import (
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
)

// pendingKeyFile holds the key of a bootstrap under way, in the cert dir,
// until its certificate is stored beside it in the store's pair file. The
// kubelet's name, so that either finds the other's.
const pendingKeyFile = "kubelet-client.key.tmp"

// clientUsages are what the kube-apiserver-client-kubelet signer requires
// of an ECDSA key (an RSA key would add key encipherment).
var clientUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageDigitalSignature,
	certificatesv1.UsageClientAuth,
}

func nodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// bootstrapper obtains the node's first certificate with the bootstrap
// credentials.
type bootstrapper struct {
	log      logr.Logger
	nodeName string
	certDir  string
	client   kubernetes.Interface
	// bootPath names the bootstrap kubeconfig in errors about its
	// credentials.
	bootPath string
	// timeout bounds the whole request: submitting the CSR, its approval
	// and its signing.
	timeout time.Duration
}

// requestCertificate returns a certificate signed for the node, and its
// key, both PEM.
func (b *bootstrapper) requestCertificate(ctx context.Context) (certPEM, keyPEM []byte, err error) {
	keyPath := filepath.Join(b.certDir, pendingKeyFile)
	key, keyPEM, err := loadOrCreateKey(b.log, keyPath)
	if err != nil {
		return nil, nil, err
	}
	subject := nodeSubject(b.nodeName)
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("making a certificate request with %s: %w", keyPath, err)
	}
	name, err := csrName(key.Public(), subject)
	if err != nil {
		return nil, nil, err
	}
	// client-go's csr helpers log through the context's logger.
	boundCtx, cancel := context.WithTimeout(klog.NewContext(ctx, b.log), b.timeout)
	defer cancel()
	uid, err := b.submit(boundCtx, name, csrPEM, key)
	if err != nil {
		return nil, nil, fmt.Errorf("CSR %s for node %q: %w", name, b.nodeName, err)
	}
	b.log.Info("Waiting for the node's certificate signing request to be approved and signed", "csr", name, "timeout", b.timeout)
	certPEM, err = csr.WaitForCertificate(boundCtx, b.client, name, uid)
	if err != nil {
		return nil, nil, b.explain(ctx, boundCtx, name, err, keyPath)
	}
	return certPEM, keyPEM, nil
}

// submit creates the CSR, or finds the one of the same name an earlier
// run created, retrying with backoff while the apiserver cannot answer.
func (b *bootstrapper) submit(ctx context.Context, name string, csrPEM []byte, key crypto.Signer) (types.UID, error) {
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: 30 * time.Second}
	for {
		reqCtx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, uid, err := csr.RequestCertificateWithContext(reqCtx, b.client, csrPEM, name,
			certificatesv1.KubeAPIServerClientKubeletSignerName, nil, clientUsages, key)
		cancel()
		switch {
		case err == nil:
			return uid, nil
		case apierrors.IsUnauthorized(err):
			return "", fmt.Errorf("bootstrap kubeconfig %s: the apiserver refused its credentials (an expired or deleted bootstrap token?): %w", b.bootPath, err)
		case apierrors.IsForbidden(err):
			return "", fmt.Errorf("bootstrap kubeconfig %s: its user may not create certificate signing requests: %w", b.bootPath, err)
		case apierrors.IsBadRequest(err) || apierrors.IsInvalid(err):
			return "", err
		}
		d := backoff.Step()
		b.log.Info("Could not submit the node's certificate signing request; retrying", "csr", name, "err", err, "retryIn", d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("not submitted before the bound (%w); last error: %v", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// explain turns an error from waiting for the CSR into one that says
// what happened to the CSR. A denied, failed or deleted CSR will never be
// signed: its key is removed so that the next attempt asks anew. A CSR
// still pending keeps its key, so that the next attempt waits for it.
func (b *bootstrapper) explain(parent, bound context.Context, name string, err error, keyPath string) error {
	if parent.Err() != nil {
		return fmt.Errorf("CSR %s: %w", name, parent.Err())
	}
	if bound.Err() != nil {
		return fmt.Errorf("CSR %s for node %q was not approved and signed within %v (kubectl certificate approve %s): %w",
			name, b.nodeName, b.timeout, name, err)
	}
	getCtx, cancel := context.WithTimeout(parent, requestTimeout)
	defer cancel()
	obj, gerr := b.client.CertificatesV1().CertificateSigningRequests().Get(getCtx, name, metav1.GetOptions{})
	var final error
	switch {
	case apierrors.IsNotFound(gerr):
		final = fmt.Errorf("CSR %s for node %q was deleted before it was signed", name, b.nodeName)
	case gerr == nil:
		for _, c := range obj.Status.Conditions {
			if c.Status == corev1.ConditionFalse {
				continue
			}
			switch c.Type {
			case certificatesv1.CertificateDenied:
				final = fmt.Errorf("CSR %s for node %q was denied: reason %q: %s", name, b.nodeName, c.Reason, c.Message)
			case certificatesv1.CertificateFailed:
				final = fmt.Errorf("CSR %s for node %q failed to be signed: reason %q: %s", name, b.nodeName, c.Reason, c.Message)
			}
		}
	}
	if final == nil {
		return fmt.Errorf("CSR %s: %w", name, err)
	}
	if rerr := os.Remove(keyPath); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		b.log.Error(rerr, "Could not remove the key of a refused certificate request", "path", keyPath)
	}
	return final
}

// loadOrCreateKey returns the key a bootstrap interrupted earlier left at
// path, or makes one (ECDSA P-256) and writes it there first, so that a
// crash from here on finds it.
func loadOrCreateKey(log logr.Logger, path string) (crypto.Signer, []byte, error) {
	data, err := readBounded(path, maxReferencedBytes)
	switch {
	case err == nil:
		if k, perr := keyutil.ParsePrivateKeyPEM(data); perr == nil {
			if s, ok := k.(crypto.Signer); ok {
				log.Info("Reusing the key of an unfinished bootstrap", "path", path)
				return s, data, nil
			}
		}
		log.Info("Replacing an unreadable key left by an unfinished bootstrap", "path", path)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("bootstrap key: %w", err)
	}
	data, err = keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, nil, fmt.Errorf("making the node's key: %w", err)
	}
	if err := writeAtomic(path, data); err != nil {
		return nil, nil, fmt.Errorf("bootstrap key: %w", err)
	}
	k, err := keyutil.ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, nil, fmt.Errorf("bootstrap key %s: %w", path, err)
	}
	return k.(crypto.Signer), data, nil
}

// csrName derives the CSR's name from what it asks for: the same key and
// subject give the same name, so a restarted bootstrap finds its earlier
// CSR (client-go's RequestCertificate reuses one of the same name) instead
// of adding another.
func csrName(pub crypto.PublicKey, subject pkix.Name) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encoding the node's public key: %w", err)
	}
	h := sha256.New()
	// Length-prefixed fields, so that no two inputs hash the same stream.
	for _, f := range append([]string{string(der), subject.CommonName}, subject.Organization...) {
		fmt.Fprintf(h, "%d:%s;", len(f), f)
	}
	return "node-csr-" + hex.EncodeToString(h.Sum(nil)[:20]), nil
}
