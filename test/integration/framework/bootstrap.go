package framework

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// BootstrapGroup is the group kubeadm's node bootstrap tokens authenticate
// in; the RBAC bindings controlplane-up.sh creates name it.
const BootstrapGroup = "system:bootstrappers:kubeadm:default-node-token"

// BootstrapToken is a bootstrap token as `kubeadm token create` issues it.
type BootstrapToken struct {
	ID, Secret string
}

// String is the token as a client presents it: "<id>.<secret>".
func (b BootstrapToken) String() string { return b.ID + "." + b.Secret }

// User is the name the apiserver authenticates the token as.
func (b BootstrapToken) User() string { return "system:bootstrap:" + b.ID }

// NewBootstrapToken stores a new bootstrap token valid for ttl as the
// Secret kubeadm writes (kube-system/bootstrap-token-<id>), usable for
// authentication and signing, in kubeadm's node group, and returns once the
// apiserver accepts it. The test's end deletes it.
func (e *Env) NewBootstrapToken(t testing.TB, ttl time.Duration) BootstrapToken {
	t.Helper()
	tok := BootstrapToken{ID: randomToken(6), Secret: randomToken(16)}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + tok.ID, Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretType("bootstrap.kubernetes.io/token"),
		StringData: map[string]string{
			"description":                    "nodeagent integration test",
			"token-id":                       tok.ID,
			"token-secret":                   tok.Secret,
			"expiration":                     time.Now().Add(ttl).UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true",
			"usage-bootstrap-signing":        "true",
			"auth-extra-groups":              BootstrapGroup,
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.AdminClient.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating bootstrap token secret %s: %v", secret.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = e.AdminClient.CoreV1().Secrets(secret.Namespace).Delete(ctx, secret.Name, metav1.DeleteOptions{})
	})
	if err := e.waitTokenAccepted(ctx, tok); err != nil {
		t.Fatalf("bootstrap token %s: %v", tok.ID, err)
	}
	return tok
}

// waitTokenAccepted waits until the apiserver authenticates tok: it reads
// token Secrets from an informer, so for a moment after the Secret is
// created the token is refused (401).
func (e *Env) waitTokenAccepted(ctx context.Context, tok BootstrapToken) error {
	c, err := kubernetes.NewForConfig(&rest.Config{
		Host:            e.APIServerURL,
		BearerToken:     tok.String(),
		TLSClientConfig: rest.TLSClientConfig{CAFile: e.CAFile},
	})
	if err != nil {
		return err
	}
	for {
		_, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if !apierrors.IsUnauthorized(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still refused when %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WriteBootstrapKubeconfig writes a kubeconfig for tok (the apiserver's URL,
// the cluster CA, the token), as a node's --bootstrap-kubeconfig, into a
// directory of the test's own, and returns its path.
func (e *Env) WriteBootstrapKubeconfig(t testing.TB, tok BootstrapToken) string {
	t.Helper()
	ca, err := os.ReadFile(e.CAFile)
	if err != nil {
		t.Fatalf("reading the cluster CA: %v", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: e.APIServerURL, CertificateAuthorityData: ca}
	cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: tok.String()}
	cfg.Contexts["bootstrap"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "bootstrap"}
	cfg.CurrentContext = "bootstrap"
	path := filepath.Join(t.TempDir(), "bootstrap-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return path
}

// randomToken returns n characters of [a-z0-9], the bootstrap token alphabet.
func randomToken(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b) // documented never to fail
	for i := range b {
		// 256 is not a multiple of 36: the first four letters are a little
		// more likely, harmless for a test's token.
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
