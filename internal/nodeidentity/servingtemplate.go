package nodeidentity

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// servingTemplate is the request for the node's serving certificate:
// system:node:<name> in system:nodes, for the hostnames and IPs among
// addrs, in a stable order so that an unchanged node asks for the same
// one. It is nil while addrs hold no IP: the kubelet-serving signer and
// the approvers in use check the IPs a node reports, and a certificate
// without one would not serve the apiserver's calls by InternalIP.
func servingTemplate(nodeName string, addrs []corev1.NodeAddress) *x509.CertificateRequest {
	var names []string
	var ips []net.IP
	addIP := func(ip net.IP) {
		if !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	}
	for _, a := range addrs {
		if a.Address == "" {
			continue
		}
		ip := net.ParseIP(a.Address)
		switch a.Type {
		case corev1.NodeHostName:
			// A hostname may be an address (a node named by its IP).
			if ip != nil {
				addIP(ip)
			} else if !slices.Contains(names, a.Address) {
				names = append(names, a.Address)
			}
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip != nil {
				addIP(ip)
			}
		case corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			if !slices.Contains(names, a.Address) {
				names = append(names, a.Address)
			}
		}
	}
	if len(ips) == 0 {
		return nil
	}
	slices.Sort(names)
	slices.SortFunc(ips, func(a, b net.IP) int { return slices.Compare(a.To16(), b.To16()) })
	return &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}},
		DNSNames:    names,
		IPAddresses: ips,
	}
}
