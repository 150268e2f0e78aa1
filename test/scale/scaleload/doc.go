// Command scaleload is the load and the measurement of hack/scale.sh: on a
// cluster whose hollow nodes are up, it watches a quiet period (idle),
// then creates a Deployment of --pods-per-node pods for each node and waits
// until every pod is Running (start-up), watches another quiet period with
// them running (running), then deletes it and waits until every pod is gone
// (deletion). For each phase it prints what the control plane served:
//
//   - requests, by client (the nodes together, and every other user) and by
//     verb and resource, from the apiserver's audit log (--audit-log), per
//     node per second for the nodes;
//   - watches open (WATCH requests in flight, apiserver_longrunning_requests)
//     and the watch traffic (events and bytes sent to watchers, events the
//     watch cache dispatched) from the apiserver's /metrics;
//   - etcd writes (etcd_mvcc_put_total, etcd_mvcc_delete_total) from etcd's
//     /metrics (--etcd-url);
//   - CPU (cores, averaged over the phase) and RSS of every process named by
//     --pid, and of the nodes' processes together (mean and max);
//   - pod start-up latency, from the moment the watch sees a pod to the
//     moment it sees it Running, p50, p99 and max, and its two parts: until
//     the watch sees it bound to a node (the scheduler's), and from then on
//     (the node's).
package main
