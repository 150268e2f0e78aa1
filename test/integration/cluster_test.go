package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/client-go/util/retry"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// These tests prove the control plane around the agent behaves as a
// kubeadm cluster, with client-go alone and no agent: TLS bootstrap from a
// bootstrap token, the node lifecycle controller, the garbage collector.

// uniqueNodeName is a node name no other test uses.
func uniqueNodeName(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
}

// nodeCertificate bootstraps a client certificate for system:node:<name> as
// a kubelet does: a CSR for the kubelet client signer, made with a bootstrap
// token's kubeconfig, approved by the csrapproving controller and signed by
// the controller-manager. It returns a client config using it and the
// certificate.
func nodeCertificate(ctx context.Context, t *testing.T, name string) (*rest.Config, *x509.Certificate) {
	t.Helper()
	tok := env.NewBootstrapToken(t, time.Hour)
	bootstrapCfg, err := clientcmd.BuildConfigFromFlags("", env.WriteBootstrapKubeconfig(t, tok))
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := kubernetes.NewForConfigOrDie(bootstrapCfg)

	// The bootstrap token authenticates in kubeadm's node group.
	who := whoAmI(ctx, t, bootstrap)
	if who.Username != tok.User() || !slices.Contains(who.Groups, framework.BootstrapGroup) {
		t.Fatalf("the bootstrap token authenticates as %s in %v, want %s in %s", who.Username, who.Groups, tok.User(), framework.BootstrapGroup)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csrPEM, err := certutil.MakeCSR(key, &pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	reqName, reqUID, err := csr.RequestCertificateWithContext(ctx, bootstrap, csrPEM, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
	if err != nil {
		t.Fatalf("creating the CSR with the bootstrap token: %v", err)
	}
	t.Cleanup(func() {
		_ = env.AdminClient.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), reqName, metav1.DeleteOptions{})
	})
	certPEM, err := csr.WaitForCertificate(ctx, bootstrap, reqName, reqUID)
	if err != nil {
		t.Fatalf("waiting for CSR %s to be approved and signed: %v", reqName, err)
	}

	// Approved by the controller, through kubeadm's auto-approve binding,
	// not by anyone else.
	req, err := env.AdminClient.CertificatesV1().CertificateSigningRequests().Get(ctx, reqName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(req.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved
	}); i < 0 || req.Status.Conditions[i].Reason != "AutoApproved" {
		t.Errorf("CSR %s conditions = %+v, want Approved with reason AutoApproved", reqName, req.Status.Conditions)
	}

	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(env.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the issued certificate does not chain to the cluster CA for client auth: %v", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	return &rest.Config{
		Host:            env.APIServerURL,
		TLSClientConfig: rest.TLSClientConfig{CAFile: env.CAFile, CertData: certPEM, KeyData: keyPEM},
		UserAgent:       "nodeagent-integration/" + name,
	}, certs[0]
}

func whoAmI(ctx context.Context, t *testing.T, c kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	return r.Status.UserInfo
}

func nodeLease(name string, renew time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &name,
			LeaseDurationSeconds: new(int32(40)),
			RenewTime:            &metav1.MicroTime{Time: renew},
		},
	}
}

// A bootstrap token becomes a node's client certificate, and the
// certificate is that node's identity and no other's.
func TestClusterBootstrapsNodeClientCertificate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := uniqueNodeName("bootstrap")
	cfg, cert := nodeCertificate(ctx, t, name)
	if want := "system:node:" + name; cert.Subject.CommonName != want {
		t.Errorf("certificate CN = %q, want %q", cert.Subject.CommonName, want)
	}
	// kubeadm's default signing duration: a year.
	if life := time.Until(cert.NotAfter); life < 364*24*time.Hour || life > 366*24*time.Hour {
		t.Errorf("certificate valid for another %v, want a year", life)
	}

	node := kubernetes.NewForConfigOrDie(cfg)
	who := whoAmI(ctx, t, node)
	if who.Username != "system:node:"+name || !slices.Contains(who.Groups, "system:nodes") {
		t.Fatalf("the certificate authenticates as %s in %v, want system:node:%s in system:nodes", who.Username, who.Groups, name)
	}

	// The Node authorizer and NodeRestriction let it write its own Lease ...
	leases := node.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	if _, err := leases.Create(ctx, nodeLease(name, time.Now()), metav1.CreateOptions{}); err != nil {
		t.Fatalf("the node creating its own Lease: %v", err)
	}
	t.Cleanup(func() {
		_ = env.AdminClient.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// ... and no other node's.
	intruder := kubernetes.NewForConfigOrDie(framework.ExpectForbidden(cfg))
	other := nodeLease(name+"-other", time.Now())
	if _, err := intruder.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, other, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node creating another node's Lease: %v, want Forbidden", err)
	}
}

// RestartControllerManager's signing duration reaches the certificates it
// signs.
func TestClusterShortSigningDuration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env.RestartControllerManager(t, 10*time.Minute)
	_, cert := nodeCertificate(ctx, t, uniqueNodeName("shortlived"))
	// The signer backdates NotBefore for clock skew; NotAfter is the signing
	// time plus the duration.
	if left := time.Until(cert.NotAfter); left > 10*time.Minute || left < 8*time.Minute {
		t.Errorf("certificate valid for another %v, want about the 10m signing duration", left)
	}
}

// The node lifecycle controller keeps a node Ready while its Lease is
// renewed and marks it Ready=Unknown within the grace period once the
// renewals stop.
func TestClusterNodeGoesUnknownWhenLeaseStops(t *testing.T) {
	grace := env.NodeMonitorGracePeriod
	ctx, cancel := context.WithTimeout(context.Background(), 3*grace+time.Minute)
	defer cancel()
	name := uniqueNodeName("lease")
	nodes := env.AdminClient.CoreV1().Nodes()
	leases := env.AdminClient.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	t.Cleanup(func() {
		_ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = leases.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// One status post at the start; from then on only the Lease says the
	// node is alive, as with a kubelet whose status has not changed. The
	// controller-manager may change the new Node first (its taints): the
	// post is made on the newest.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		node.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}}
		_, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := leases.Create(ctx, nodeLease(name, time.Now()), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ready := func() corev1.ConditionStatus {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status
			}
		}
		return ""
	}

	// Renewed every 2 s for longer than the grace period: still Ready.
	for end := time.Now().Add(grace + 5*time.Second); time.Now().Before(end); {
		time.Sleep(2 * time.Second)
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		if lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if s := ready(); s != corev1.ConditionTrue {
		t.Fatalf("Ready = %q after %v of Lease renewals, want True", s, grace+5*time.Second)
	}

	stopped := time.Now()
	for ready() == corev1.ConditionTrue {
		if time.Since(stopped) > grace+15*time.Second {
			t.Fatalf("still Ready %v after the last Lease renewal; grace period %v", time.Since(stopped), grace)
		}
		time.Sleep(500 * time.Millisecond)
	}
	took := time.Since(stopped)
	if s := ready(); s != corev1.ConditionUnknown {
		t.Errorf("Ready = %q after the Lease stopped, want Unknown", s)
	}
	if took < grace-time.Second {
		t.Errorf("Ready left True %v after the last renewal, before the %v grace period", took, grace)
	}
	t.Logf("Ready=Unknown %v after the last Lease renewal (grace period %v)", took.Round(100*time.Millisecond), grace)
}

// The garbage collector deletes an object whose owner is gone.
func TestClusterCollectsGarbage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cms := env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault)
	name := uniqueNodeName("gc")
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:            name + "-dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	if _, err := cms.Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), dependent.Name, metav1.DeleteOptions{}) })
	// Deleted with the default (background) propagation: the apiserver
	// removes the owner at once and leaves its dependents to the collector.
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := cms.Get(ctx, dependent.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatalf("dependent ConfigMap %s still exists 2 minutes after its owner was deleted", dependent.Name)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// The service account controller and the root CA publisher run: every
// namespace has its default ServiceAccount and the cluster CA in
// kube-root-ca.crt, as pods on a kubeadm cluster expect.
func TestClusterPublishesServiceAccountsAndRootCA(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	caPEM, err := os.ReadFile(env.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, saErr := env.AdminClient.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		cm, cmErr := env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if saErr == nil && cmErr == nil {
			if cm.Data["ca.crt"] != string(caPEM) {
				t.Errorf("kube-root-ca.crt holds %q, want the cluster CA", cm.Data["ca.crt"])
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("default ServiceAccount: %v; kube-root-ca.crt: %v", saErr, cmErr)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// StopAPIServer and StartAPIServer take the apiserver away and bring it
// back on the same address with the same data, and the rest of the control
// plane carries on.
func TestClusterAPIServerRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cms := env.AdminClient.CoreV1().ConfigMaps(metav1.NamespaceDefault)
	kept, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: uniqueNodeName("kept")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), kept.Name, metav1.DeleteOptions{}) })

	env.StopAPIServer(t)
	short, cancelShort := context.WithTimeout(ctx, 5*time.Second)
	_, err = cms.Get(short, kept.Name, metav1.GetOptions{})
	cancelShort()
	if err == nil {
		t.Fatal("the apiserver answered while stopped")
	}
	env.StartAPIServer(t)
	got, err := cms.Get(ctx, kept.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if got.UID != kept.UID {
		t.Errorf("after the restart the ConfigMap has UID %s, want %s (same etcd)", got.UID, kept.UID)
	}
	// The controller-manager rode out the outage: it still approves and
	// signs a node's CSR.
	nodeCertificate(ctx, t, uniqueNodeName("after-outage"))
}
