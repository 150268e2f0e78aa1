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
// The node API's serving certificate comes from the cluster too, with
// --rotate-server-certificates (Identity.NewServing, serving.go): the
// node's own client submits a CSR for the kubernetes.io/kubelet-serving
// signer, system:node:<name> in system:nodes, for the hostnames and IPs
// the Node reports (none is asked for before it reports an IP), usages
// digital signature and server auth (ECDSA P-256: no key encipherment).
// The controller-manager does not approve such CSRs: the agent logs once
// per CSR that it awaits approval, and until a certificate is issued the
// node API's handshakes fail with an error that names the CSR. The pair
// is kept as kubelet-server-current.pem in the cert dir, renewed at 70 to
// 90 % of its life or when the Node's addresses change, and served
// through tls.Config.GetCertificate, so the next handshake presents a
// renewed one. Given --tls-cert-file too, that pair is served until the
// cluster's is stored, as the kubelet does, and the log says which one
// is served. Metrics: nodeagent_node_identity_serving_certificate_*
// (expiration_timestamp_seconds, renewal_failures_total,
// rotation_seconds), beside the client certificate's; and the same under
// the kubelet's names, which its alerts read:
// kubelet_certificate_manager_{client,server}_ttl_seconds,
// kubelet_certificate_manager_client_expiration_renew_errors,
// kubelet_server_expiration_renew_errors and
// kubelet_certificate_manager_server_rotation_seconds.
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
//	serving, err := id.NewServing(nodeidentity.ServingOptions{Addresses: ...})
//	tlsConfig.GetCertificate = serving.GetCertificate
//	go serving.Run(ctx)
package nodeidentity
