// Command nodeapi measures a node's API as an operator meets it, through the
// real kubectl and the apiserver, on one prepared pod in each of one or more
// clusters (--target; hack/bench-nodeapi.sh starts each cluster, its node
// and the pod):
//
//   - get: the wall time of `kubectl get pod POD`, which the node takes no
//     part in: kubectl's start and one apiserver request, the floor under
//     exec's figure.
//   - exec: the wall time of `kubectl exec POD -c EXEC -- true`, from the
//     start of the kubectl process to its exit.
//   - logs: with `kubectl logs -f POD -c LOG --tail=1` streaming (its first
//     line printed, so the node follows the log), the time from handing the
//     container a line to kubectl printing it. The container echoes what it
//     reads from a FIFO on a hostPath volume (--fifo is its host end), so the
//     line's write and its arrival are both seen by this process, on one
//     monotonic clock.
//
// Each is measured --count times on each target after one unmeasured
// warm-up (the node's and the apiserver's authorization caches, kubectl's
// discovery cache), the targets taking turns within an iteration so that
// they share the machine's load, and printed as median, p90 (nearest rank)
// and minimum, with every sample when --samples names a file.
package main
