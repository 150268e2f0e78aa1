package nodeidentity

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// kubeconfig is a kubeconfig file flattened to its current context, with
// every file it names read (bounded) into the rest.Config.
type kubeconfig struct {
	path string
	rest *rest.Config
	// caFile is the absolute path of the CA bundle the file names, if it
	// names one: a kubeconfig written from a bootstrap kubeconfig refers to
	// the same file, as the kubelet's does, so that a CA rotated on disk is
	// followed.
	caFile string
}

// unusableError says why a kubeconfig that could be read cannot be used;
// with a bootstrap kubeconfig that is a reason to bootstrap, not to fail.
type unusableError struct {
	path   string
	reason string
}

func (e *unusableError) Error() string { return e.path + ": " + e.reason }

func unusable(path, format string, args ...any) error {
	return &unusableError{path: path, reason: fmt.Sprintf(format, args...)}
}

// loadKubeconfig reads the kubeconfig at path. A missing file's error
// satisfies errors.Is(err, fs.ErrNotExist); one that cannot be read is
// another error; a readable file that does not give a server and
// credentials this package supports is an *unusableError.
func loadKubeconfig(path string) (*kubeconfig, error) {
	data, err := readBounded(path, maxKubeconfigBytes)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, unusable(path, "%v", err)
	}
	// Relative paths in a kubeconfig are relative to its own directory.
	for _, c := range cfg.Clusters {
		c.LocationOfOrigin = path
	}
	for _, a := range cfg.AuthInfos {
		a.LocationOfOrigin = path
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, unusable(path, "%v", err)
	}
	kctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, unusable(path, "current-context %q: no such context", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, unusable(path, "context %q: cluster %q: no such cluster", cfg.CurrentContext, kctx.Cluster)
	}
	if cluster.Server == "" {
		return nil, unusable(path, "cluster %q: no server", kctx.Cluster)
	}
	auth, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok {
		return nil, unusable(path, "context %q: user %q: no such user", cfg.CurrentContext, kctx.AuthInfo)
	}
	if auth.Exec != nil || auth.AuthProvider != nil || auth.Username != "" || auth.Impersonate != "" {
		return nil, unusable(path, "user %q: only a client certificate or a token is supported", kctx.AuthInfo)
	}
	kc := &kubeconfig{path: path, caFile: cluster.CertificateAuthority}
	if err := inline(path, &cluster.CertificateAuthorityData, &cluster.CertificateAuthority); err != nil {
		return nil, err
	}
	if err := inline(path, &auth.ClientCertificateData, &auth.ClientCertificate); err != nil {
		return nil, err
	}
	if err := inline(path, &auth.ClientKeyData, &auth.ClientKey); err != nil {
		return nil, err
	}
	if auth.TokenFile != "" {
		var token []byte
		if err := inline(path, &token, &auth.TokenFile); err != nil {
			return nil, err
		}
		auth.Token = string(token)
	}
	kc.rest, err = clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, unusable(path, "%v", err)
	}
	return kc, nil
}

// inline reads the file *file names into *data, so that every byte this
// package hands client-go was read under a bound.
func inline(kubeconfigPath string, data *[]byte, file *string) error {
	if *file == "" {
		return nil
	}
	b, err := readBounded(*file, maxReferencedBytes)
	if err != nil {
		return unusable(kubeconfigPath, "%v", err)
	}
	*data, *file = b, ""
	return nil
}

// credentialProblem says why kc's credentials cannot be used at now, or ""
// when they can: a client certificate not expired whose key matches, or a
// token (whose validity only the apiserver knows).
func credentialProblem(kc *kubeconfig, now time.Time) string {
	r := kc.rest
	switch {
	case len(r.CertData) > 0:
		if _, err := tls.X509KeyPair(r.CertData, r.KeyData); err != nil {
			return fmt.Sprintf("client certificate and key: %v", err)
		}
		certs, err := certutil.ParseCertsPEM(r.CertData)
		if err != nil {
			return fmt.Sprintf("client certificate: %v", err)
		}
		for _, c := range certs {
			if now.After(c.NotAfter) {
				return fmt.Sprintf("client certificate %q expired at %s", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339))
			}
		}
		return ""
	case r.BearerToken != "":
		return ""
	default:
		return "no client certificate or token"
	}
}

// loadUsable loads the kubeconfig at path and checks its credentials. The
// error is an *unusableError, or wraps fs.ErrNotExist, when bootstrapping
// may replace the file; any other error is fatal.
func loadUsable(path string, now time.Time) (*kubeconfig, error) {
	kc, err := loadKubeconfig(path)
	if err != nil {
		return nil, err
	}
	if p := credentialProblem(kc, now); p != "" {
		return nil, unusable(path, "%s", p)
	}
	return kc, nil
}

// replaceable says whether err, from loadUsable, is one that bootstrapping
// cures by writing a new kubeconfig.
func replaceable(err error) bool {
	var u *unusableError
	return errors.As(err, &u) || errors.Is(err, fs.ErrNotExist)
}

// writeNodeKubeconfig writes the kubeconfig the node uses after
// bootstrapping: the bootstrap kubeconfig's server and CA, and the client
// certificate and key in pemPath (one file, the store's current pair).
func writeNodeKubeconfig(path string, boot *kubeconfig, pemPath string) error {
	cluster := &clientcmdapi.Cluster{
		Server:                boot.rest.Host,
		TLSServerName:         boot.rest.ServerName,
		InsecureSkipTLSVerify: boot.rest.Insecure,
	}
	if boot.caFile != "" {
		cluster.CertificateAuthority = boot.caFile // absolute: loadKubeconfig resolved it
	} else {
		cluster.CertificateAuthorityData = boot.rest.CAData
	}
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"default-cluster": cluster},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"default-auth": {
			ClientCertificate: pemPath,
			ClientKey:         pemPath,
		}},
		Contexts: map[string]*clientcmdapi.Context{"default-context": {
			Cluster:  "default-cluster",
			AuthInfo: "default-auth",
		}},
		CurrentContext: "default-context",
	}
	data, err := clientcmd.Write(cfg)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}
