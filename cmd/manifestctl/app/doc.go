// Package app is the manifestctl command: a cobra tree of kubectl-like
// verbs over a node's manifest directory and nodeagent's local API.
//
// Its defaults (the manifest directory, the local API socket, the node
// name, the pod log directory) come from nodeagent's own config file, read
// by internal/configfile, and every manifest is decoded and validated by
// staging/manifest, the code the agent runs: manifestctl has no validator of
// its own. Without a running agent, the commands that can work on the
// directory alone (validate, diff, apply, rm, rollback, get) still do, and
// say that the agent is not running.
package app
