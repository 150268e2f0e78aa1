// Package nodeidentity gives the agent its own identity in connected mode:
// the client certificate of system:node:<name> (group system:nodes) and a
// rest.Config that presents it, as the kubelet does with --kubeconfig,
// --bootstrap-kubeconfig, --cert-dir and --rotate-certificates.
//
// New decides which credentials to use. A kubeconfig whose client
// certificate has not expired, or which carries a token, is used as it is.
// Otherwise, given a bootstrap kubeconfig, New performs TLS bootstrapping:
// it makes an ECDSA P-256 key, submits a CertificateSigningRequest to the
// kubernetes.io/kube-apiserver-client-kubelet signer with the bootstrap
// credentials, waits (bounded) for it to be approved and signed, stores the
// pair in the cert dir (kubelet-client-current.pem, 0600) and writes the
// kubeconfig (0600) pointing at it. The key waits in the cert dir until its
// certificate arrives, and the CSR's name derives from it, so an agent that
// crashes while waiting asks for the same CSR again instead of a new one.
//
// With rotation on, client-go's certificate manager renews the certificate
// at 70 to 90 % of its life. Every client built from RESTConfig presents
// the manager's current certificate on each new TLS handshake, and Run
// closes the open connections when the certificate changes, so that no
// request rides an old connection past its certificate's expiry; watches
// see their connection end and their reflectors start them again.
//
// Bounds: a kubeconfig, and each CA, certificate, key or token file it
// names, is read up to 1 MiB, once (a token file is not re-read); each
// request about a CSR takes at most 30 s; a bootstrap waits for its CSR at
// most Options.BootstrapTimeout. Credentials come from a client
// certificate or a token only: exec plugins and auth providers are
// refused, as a node's identity is its certificate.
//
// client-go's manager (v0.37) sleeps until its next renewal without
// watching its context, so after Run returns one goroutine of it lingers
// until that deadline, then logs that it could not renew and ends.
//
//	id, err := nodeidentity.New(ctx, nodeidentity.Options{NodeName: name, ...})
//	cs, err := kubernetes.NewForConfig(id.RESTConfig())
//	go id.Run(ctx) // rotation; ends with ctx
package nodeidentity
