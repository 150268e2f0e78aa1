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
//
// It keeps kubectl's habits: exit 2 on bad usage (and diff's 0 same, 1
// different, 2 error); -v is klog's verbosity; -f FILE and -f - (the
// standard input, bounded as a manifest) wherever a manifest is read; get's
// -o name, json, yaml, jsonpath, jsonpath-file and custom-columns print v1
// objects (a List of Pods) through cli-runtime's printers, --no-headers
// drops the tables' headers; cobra's shell completion completes pod names
// from the agent and manifest file names; apply --wait says on stderr what
// it waits for once it has waited a second; text from containers is escaped
// before it reaches the terminal.
package app
