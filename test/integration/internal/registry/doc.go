// Command registry is the container image registry of the integration
// tests: go-containerregistry's in-memory registry behind TLS and HTTP
// basic auth, on 127.0.0.1 only. No registry is reachable from the test
// machines, so the tests push the locally built images here and the agent
// pulls them through containerd as it would from any private registry.
//
// Repositories under private/ need the one user's credentials to be read;
// any other may be read anonymously. Every write, and the /v2/ ping with
// which clients discover the auth scheme, needs them. Each request is
// logged on stderr (method, path, status, user), so that a test can tell
// how often the agent went to the registry.
//
//	registry -cert tls.crt -key tls.key -user test -password-file pw -addr-file addr
package main
