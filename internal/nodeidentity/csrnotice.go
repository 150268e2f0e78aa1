package nodeidentity

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certificatesv1client "k8s.io/client-go/kubernetes/typed/certificates/v1"
	"k8s.io/client-go/util/watchlist"
)

// csrNoticeClient is a clientset that calls created with each
// CertificateSigningRequest it creates: client-go's certificate manager
// says nothing of the CSR it submits, and one for the kubelet-serving
// signer waits for a person or an approver, which the node's log must
// tell.
type csrNoticeClient struct {
	kubernetes.Interface
	created func(*certificatesv1.CertificateSigningRequest)
}

// IsWatchListSemanticsUnSupported passes on what the wrapped clientset
// says of watch-list requests, which client-go's wait for a CSR asks the
// clientset (a fake one does not support them).
func (c csrNoticeClient) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(c.Interface)
}

func (c csrNoticeClient) CertificatesV1() certificatesv1client.CertificatesV1Interface {
	return csrNoticeGroup{CertificatesV1Interface: c.Interface.CertificatesV1(), created: c.created}
}

type csrNoticeGroup struct {
	certificatesv1client.CertificatesV1Interface
	created func(*certificatesv1.CertificateSigningRequest)
}

func (g csrNoticeGroup) CertificateSigningRequests() certificatesv1client.CertificateSigningRequestInterface {
	return csrNoticeCSRs{CertificateSigningRequestInterface: g.CertificatesV1Interface.CertificateSigningRequests(), created: g.created}
}

type csrNoticeCSRs struct {
	certificatesv1client.CertificateSigningRequestInterface
	created func(*certificatesv1.CertificateSigningRequest)
}

func (c csrNoticeCSRs) Create(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, opts metav1.CreateOptions) (*certificatesv1.CertificateSigningRequest, error) {
	out, err := c.CertificateSigningRequestInterface.Create(ctx, csr, opts)
	if err == nil {
		c.created(out)
	}
	return out, err
}
