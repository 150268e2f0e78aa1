// Command credplugin is a kubelet image credential provider plugin
// (credentialprovider.kubelet.k8s.io/v1) for the integration tests: it
// reads a CredentialProviderRequest on stdin and answers the credentials
// in its environment for the registry host of the requested image, as a
// CredentialProviderResponse on stdout, cached by Registry.
//
// Each run appends the requested image, one line, to $CREDPLUGIN_LOG, so
// a test counts the runs the agent made.
//
//	CREDPLUGIN_USER=u CREDPLUGIN_PASSWORD=p CREDPLUGIN_LOG=/tmp/runs credplugin <request.json
package main
