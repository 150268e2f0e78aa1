package nodeidentity

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
)

// storePrefix names the pair files in the cert dir
// (kubelet-client-current.pem and its dated predecessors), as the
// kubelet's store does.
const storePrefix = "kubelet-client"

// requestTimeout bounds one call to the apiserver made for the
// certificate (create or get a CSR; a watch of one is cut and resumed).
const requestTimeout = 30 * time.Second

// Options say where the node's credentials live and how to obtain them.
type Options struct {
	// NodeName is the node's name: the certificate is for
	// system:node:<NodeName>. Required.
	NodeName string
	// Kubeconfig is the node's kubeconfig (--kubeconfig). Required. It is
	// written when bootstrapping.
	Kubeconfig string
	// BootstrapKubeconfig (--bootstrap-kubeconfig), optional, holds the
	// credentials (usually a bootstrap token) used to request a
	// certificate when Kubeconfig has no usable one.
	BootstrapKubeconfig string
	// CertDir (--cert-dir) holds the key and certificate. Required when
	// bootstrapping or rotating.
	CertDir string
	// DisableRotation keeps the certificate of Kubeconfig until it expires
	// instead of renewing it (--rotate-certificates=false).
	DisableRotation bool
	// BootstrapTimeout bounds the wait for a bootstrap CSR to be approved
	// and signed; 15 minutes when zero.
	BootstrapTimeout time.Duration
	// Logger receives the progress of bootstrap and rotation.
	Logger logr.Logger
	// Registry, if set, receives the certificate's metrics.
	Registry metrics.KubeRegistry

	// newClient builds the clients that submit CSRs; tests replace it.
	newClient func(*rest.Config) (kubernetes.Interface, error)
}

// Identity is the node's identity: a rest.Config for every client of the
// agent, and the rotation that keeps its certificate fresh.
type Identity struct {
	log    logr.Logger
	opts   Options
	config *rest.Config
	// current returns the certificate the config presents; nil with a
	// token.
	current func() *tls.Certificate
	// mgr, store and dialer are set when the certificate rotates.
	mgr    certificate.Manager
	store  *noticeStore
	dialer *connrotation.Dialer
}

// New loads the node's credentials, bootstrapping them first if Kubeconfig
// has none usable and BootstrapKubeconfig is given; that blocks until the
// CSR is signed, ctx ends or BootstrapTimeout passes. Rotation starts with
// Run.
func New(ctx context.Context, opts Options) (*Identity, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	id := &Identity{log: opts.Logger, opts: opts}
	kc, err := loadUsable(opts.Kubeconfig, time.Now())
	if err != nil {
		if !replaceable(err) {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		if opts.BootstrapKubeconfig == "" {
			return nil, fmt.Errorf("kubeconfig: %w (and no bootstrap kubeconfig to obtain a certificate with)", err)
		}
		id.log.Info("Bootstrapping the node's client certificate", "reason", err.Error())
		if kc, err = id.bootstrap(ctx); err != nil {
			return nil, err
		}
	}
	if opts.DisableRotation || len(kc.rest.CertData) == 0 {
		id.config = kc.rest
		id.current = staticCertificate(kc.rest)
		_, err := registerMetrics(opts.Registry, id.current)
		return id, err
	}
	if err := checkWritableDir(opts.CertDir); err != nil {
		return nil, err
	}
	fileStore, err := certificate.NewFileStoreWithLogger(opts.Logger.V(2), storePrefix, opts.CertDir, opts.CertDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("cert dir %s: %w", opts.CertDir, err)
	}
	id.store = newNoticeStore(fileStore)
	renewFailures, err := registerMetrics(opts.Registry, func() *tls.Certificate { return id.current() })
	if err != nil {
		return nil, err
	}
	// The manager logs through this context's logger; the context has no
	// end, so the manager starts no goroutine until Run.
	logCtx := klog.NewContext(context.Background(), opts.Logger)
	id.mgr, err = certificate.NewManager(&certificate.Config{
		ClientsetFn: id.rotationClient,
		Template:    &x509.CertificateRequest{Subject: nodeSubject(opts.NodeName)},
		SignerName:  certificatesv1.KubeAPIServerClientKubeletSignerName,
		GetUsages:   certificate.DefaultKubeletClientGetUsages,
		// The store's current pair wins while it is valid; otherwise the
		// kubeconfig's pair is stored and renewed at once.
		BootstrapCertificatePEM: kc.rest.CertData,
		BootstrapKeyPEM:         kc.rest.KeyData,
		CertificateStore:        id.store,
		CertificateRenewFailure: renewFailures,
		Name:                    "node-client",
		Ctx:                     &logCtx,
	})
	if err != nil {
		return nil, fmt.Errorf("certificate manager (cert dir %s): %w", opts.CertDir, err)
	}
	id.current = id.mgr.Current
	if id.config, id.dialer, err = rotatingConfig(kc.rest, id.mgr); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", opts.Kubeconfig, err)
	}
	return id, nil
}

// ErrInvalidOptions is wrapped by the error of New and NewServing for
// options that cannot work.
var ErrInvalidOptions = errors.New("invalid node identity options")

// complete reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field (and its flag), else fills in
// the defaults.
func (o *Options) complete() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, fmt.Errorf("%w: NodeName is required", ErrInvalidOptions))
	}
	if o.Kubeconfig == "" {
		errs = append(errs, fmt.Errorf("%w: Kubeconfig (--kubeconfig) is required", ErrInvalidOptions))
	}
	if o.CertDir == "" && (o.BootstrapKubeconfig != "" || !o.DisableRotation) {
		errs = append(errs, fmt.Errorf("%w: CertDir (--cert-dir) is required to bootstrap and rotate the certificate", ErrInvalidOptions))
	}
	if o.BootstrapTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: BootstrapTimeout is negative (%v)", ErrInvalidOptions, o.BootstrapTimeout))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.BootstrapTimeout == 0 {
		o.BootstrapTimeout = 15 * time.Minute
	}
	if o.newClient == nil {
		o.newClient = func(c *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(c) }
	}
	return nil
}

// RESTConfig returns a copy of the config every API client of the agent
// is to be built from. With rotation, all clients built from it share one
// transport that follows the certificate.
func (id *Identity) RESTConfig() *rest.Config { return rest.CopyConfig(id.config) }

// Run renews the certificate before it expires and closes the
// connections made with the old one, until ctx ends. Without rotation it
// only waits for ctx. Call it once.
func (id *Identity) Run(ctx context.Context) error {
	if id.mgr == nil {
		<-ctx.Done()
		return nil
	}
	// A pair stored by New (the kubeconfig's, copied into the cert dir) is
	// the one already in use, not a renewal.
	select {
	case <-id.store.stored:
	default:
	}
	id.mgr.Start()
	defer id.mgr.Stop()
	closeOnRotation(ctx, id, id.store, id.dialer)
	return nil
}

// bootstrap obtains a certificate with the bootstrap credentials, stores
// it and writes the node's kubeconfig, then loads that as any start would.
func (id *Identity) bootstrap(ctx context.Context) (*kubeconfig, error) {
	o := id.opts
	boot, err := loadUsable(o.BootstrapKubeconfig, time.Now())
	if err != nil {
		return nil, fmt.Errorf("bootstrap kubeconfig: %w", err)
	}
	if err := checkWritableDir(o.CertDir); err != nil {
		return nil, err
	}
	// Fail before asking for a certificate there would be nowhere to use.
	if err := checkWritableDir(filepath.Dir(o.Kubeconfig)); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", o.Kubeconfig, err)
	}
	store, err := certificate.NewFileStoreWithLogger(o.Logger.V(2), storePrefix, o.CertDir, o.CertDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("cert dir %s: %w", o.CertDir, err)
	}
	client, err := o.newClient(requestConfig(boot.rest))
	if err != nil {
		return nil, fmt.Errorf("bootstrap kubeconfig %s: %w", o.BootstrapKubeconfig, err)
	}
	b := &bootstrapper{
		log: id.log, nodeName: o.NodeName, certDir: o.CertDir, client: client,
		bootPath: o.BootstrapKubeconfig, timeout: o.BootstrapTimeout,
	}
	certPEM, keyPEM, err := b.requestCertificate(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return nil, fmt.Errorf("cert dir %s: storing the node's certificate: %w", o.CertDir, err)
	}
	keyPath := filepath.Join(o.CertDir, pendingKeyFile)
	if err := os.Remove(keyPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		id.log.Error(err, "Could not remove the bootstrap key, now stored with its certificate", "path", keyPath)
	}
	if err := writeNodeKubeconfig(o.Kubeconfig, boot, store.CurrentPath()); err != nil {
		return nil, err
	}
	id.log.Info("Bootstrapped the node's client certificate", "kubeconfig", o.Kubeconfig, "certificate", store.CurrentPath())
	kc, err := loadUsable(o.Kubeconfig, time.Now())
	if err != nil {
		return nil, fmt.Errorf("kubeconfig just written: %w", err)
	}
	return kc, nil
}

// rotationClient is the manager's client for renewing: the node's own
// identity while its certificate is valid; once it has expired (the node
// was away too long), the bootstrap credentials if there are usable ones.
func (id *Identity) rotationClient(current *tls.Certificate) (kubernetes.Interface, error) {
	if current == nil && id.opts.BootstrapKubeconfig != "" {
		boot, err := loadUsable(id.opts.BootstrapKubeconfig, time.Now())
		if err == nil {
			return id.opts.newClient(requestConfig(boot.rest))
		}
		id.log.Error(err, "No valid certificate, and the bootstrap kubeconfig is not usable either")
	}
	return id.opts.newClient(requestConfig(id.config))
}

// requestConfig bounds every request of a CSR client; a watch for a CSR's
// signature is cut at the bound and resumed by its informer.
func requestConfig(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.Timeout = requestTimeout
	return c
}

// staticCertificate returns the certificate of a config that does not
// rotate, or nil for a token.
func staticCertificate(c *rest.Config) func() *tls.Certificate {
	pair, err := tls.X509KeyPair(c.CertData, c.KeyData)
	if err != nil {
		return func() *tls.Certificate { return nil }
	}
	return func() *tls.Certificate { return &pair }
}

// CloseConnections closes every connection of the clients made from the
// identity's config, so that their next requests dial afresh: a
// connection to an apiserver that vanished without closing it otherwise
// holds requests until HTTP/2's health check gives up on it. Without
// certificate rotation (a token, or rotation off) the config has no
// dialer of its own, and nothing is closed.
func (id *Identity) CloseConnections() {
	if id.dialer != nil {
		id.dialer.CloseAll()
	}
}
