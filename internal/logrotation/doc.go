// Package logrotation keeps the log files of running containers within
// bounds, as the kubelet's container log manager does: every monitor
// interval, a container whose log file has reached the maximum size has it
// renamed to <log>.<timestamp> and asks the runtime (CRI
// ReopenContainerLog) to go on in a new file at the old path. At most
// MaxFiles files are kept per container, the current one included: the
// oldest rotated files are removed, and all but the newest rotated file
// are gzip-compressed. Readers of the current file (kubectl logs, the
// local API, log shippers that follow by name) keep working.
//
// A file can outgrow the maximum size by what the container writes in one
// interval: rotation is checked, not enforced on each write.
package logrotation
