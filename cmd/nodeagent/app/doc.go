// Package app is the nodeagent command: its flags and optional config
// file (options.go; internal/configfile reads the file), the wiring of
// every part into one process (wiring.go), and the small adapters the parts need from each
// other (provider.go, origins.go, serving.go).
//
// Standalone mode, the only mode so far, takes pods from a manifest
// directory and an HTTP URL; it needs no kubeconfig and no apiserver.
//
// Stopping the process (SIGTERM, SIGINT) stops the agent, not the pods:
// containers keep running, and the next agent adopts them without a
// restart.
package app
