// Package host reads the figures of the machine the agent runs on from the
// kernel's files and calls: /proc/meminfo, a filesystem's size and inodes,
// the process IDs in use, the network interfaces' counters. Every file read is bounded in size.
//
// The node's description (internal/node) and the eviction signals
// (internal/eviction) read the host through it, so that both see one
// machine the same way.
package host
