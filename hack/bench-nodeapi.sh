#!/usr/bin/env bash
# Measures the node API as an operator meets it, nodeagent's against the
# upstream kubelet's on this machine: the wall time of
# `kubectl exec POD -- true` (beside that of `kubectl get pod POD`, the part
# the node takes no part in), and the time from a container writing a line
# to `kubectl logs -f` printing it. Each node kind in turn gets a cluster
# as hack/conformance.sh builds one (hack/cluster-node.sh: a private
# containerd, etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# the node at a private address on lo), one pod, and the measurements of
# hack/bench/nodeapi through the real kubectl ($KUBECTL_BIN); then the
# cluster is torn down.
#
#   hack/bench-nodeapi.sh               (as root)
# Env:
#   NODE                     the node kinds to measure, in order (default
#                            "kubelet nodeagent"; "nodeagent kubelet" reverses
#                            the order, to tell a drift of the load apart)
#   BENCH_COUNT              measured iterations of each (default 30)
#   BENCH_OUT                results (default /var/lib/nodeagent-bench/results):
#                            figures.txt, samples.tsv, and each node's log
#   BENCH_TOGETHER=1         bring every kind's cluster up first, then measure
#                            them in turn at each iteration, so that they share
#                            the machine's load moment by moment (two control
#                            planes at once add to that load)
#   NODEAGENT_FLAGS          extra flags for nodeagent (e.g. -v=4)
# Prints median, p90 and minimum of each measure per node kind, with the
# load average before and after the measurements.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"
# shellcheck source=hack/versions.sh
source hack/versions.sh
# shellcheck source=hack/cluster-node.sh
source hack/cluster-node.sh

OUT=${BENCH_OUT:-/var/lib/nodeagent-bench/results}
COUNT=${BENCH_COUNT:-30}
POD=bench-nodeapi

die() {
  log "bench-nodeapi: $*"
  exit 1
}

((EUID == 0)) || die "the node runs containers and manages cgroups: run this as root"

read -r -a kinds <<<"${NODE:-kubelet nodeagent}"
for kind in "${kinds[@]}"; do
  [[ $kind == kubelet || $kind == nodeagent ]] || die "NODE: $kind is neither kubelet nor nodeagent"
done
((${#kinds[@]})) || die "NODE: empty"

build() {
  log "bench-nodeapi: building (the control plane cached by version after the first run)"
  hack/controlplane-build.sh kube-apiserver kube-controller-manager kube-scheduler etcd kubelet kubectl
  hack/build.sh bin/nodeagent
  go build -o bin/bench-nodeapi ./hack/bench/nodeapi
}

# init_kind KIND: the cluster's settings, apart from hack/conformance.sh's
# (indices 3 and 4, their own state), so a conformance run may go on beside
# this one; but not the kubelet's: both would own /kubepods.
init_kind() {
  case $1 in
  kubelet) node_cluster_init kubelet 3 /var/lib/nodeagent-bench/kubelet kubepods bench-kubelet "$OUT/kubelet.log" ;;
  nodeagent) node_cluster_init nodeagent 4 /var/lib/nodeagent-bench/nodeagent bench-nodeagent bench-nodeagent "$OUT/nodeagent.log" ;;
  esac
}

kubectl_() {
  timeout 120 "$KUBECTL_BIN" --kubeconfig="$KUBECONFIG_ADMIN" "$@"
}

# create_pod: a container that echoes each line read from a FIFO the host
# holds the other end of, and one that sleeps (exec's target).
create_pod() {
  local dir=$NODE_DIR/bench
  mkdir -p "$dir"
  rm -f "$dir/fifo"
  mkfifo -m 0600 "$dir/fifo"
  # The admission of a pod wants its namespace's default ServiceAccount,
  # which the controller-manager makes a moment after it starts.
  local deadline=$((SECONDS + 60))
  until kubectl_ get serviceaccount default >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "no ServiceAccount default/default after 60s"
    sleep 1
  done
  kubectl_ apply -f - >/dev/null <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {name: $POD, namespace: default}
	spec:
	  nodeName: $NODE_NAME
	  terminationGracePeriodSeconds: 1
	  automountServiceAccountToken: false
	  containers:
	  - name: writer
	    image: $BUSYBOX_IMAGE
	    imagePullPolicy: Never
	    command: [sh, -c, 'echo ready; while :; do read -r l </bench/fifo && echo "\$l"; done']
	    volumeMounts: [{name: bench, mountPath: /bench}]
	  - name: sleeper
	    image: $BUSYBOX_IMAGE
	    imagePullPolicy: Never
	    command: [sleep, "86400"]
	  volumes:
	  - name: bench
	    hostPath: {path: $dir, type: Directory}
	EOF
  kubectl_ wait --for=condition=Ready "pod/$POD" --timeout=100s >/dev/null ||
    die "pod $POD not Ready within 100s on $NODE_NAME (log: $NODE_LOG)"
}

declare -A kubeconfig fifo pid

# up_kind KIND: KIND's cluster up, its node Ready, the pod running on it.
up_kind() {
  init_kind "$1"
  node_cluster_down
  mkdir -p "$NODE_DIR"
  node_address_up
  # shellcheck source=/dev/null
  source "$(hack/containerd-up.sh)"
  # shellcheck source=/dev/null
  source "$(hack/controlplane-up.sh)"
  [[ $NODE != nodeagent ]] || read -r -a NODE_ARGS <<<"${NODEAGENT_FLAGS:-}"
  start_node
  wait_node_ready
  create_pod
  kubeconfig[$1]=$KUBECONFIG_ADMIN fifo[$1]=$NODE_DIR/bench/fifo pid[$1]=$node_pid
  log "bench-nodeapi: $NODE_NAME ($NODE) is Ready, $POD runs on it"
}

# down_kind KIND: KIND's cluster down and its state gone.
down_kind() {
  init_kind "$1"
  node_pid=${pid[$1]:-}
  node_cluster_down
  unset "pid[$1]"
}

down_all() {
  local kind
  for kind in "${kinds[@]}"; do down_kind "$kind"; done
}

# measure KIND...: the measurements, the kinds in turn at each iteration.
measure() {
  local targets=() kind
  for kind; do targets+=(--target="$kind,${kubeconfig[$kind]},${fifo[$kind]}"); done
  log "bench-nodeapi: measuring $*"
  echo "$* load before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/figures.txt"
  bin/bench-nodeapi --kubectl="$KUBECTL_BIN" --pod="$POD" --exec-container=sleeper \
    --log-container=writer "${targets[@]}" --count="$COUNT" --samples="$OUT/samples.tsv" |
    tee -a "$OUT/figures.txt"
  echo "$* load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/figures.txt"
}

main() {
  local kind
  build
  rm -rf "$OUT"
  mkdir -p "$OUT"
  trap down_all EXIT
  if [[ ${BENCH_TOGETHER:-0} == 1 ]]; then
    for kind in "${kinds[@]}"; do up_kind "$kind"; done
    measure "${kinds[@]}"
    down_all
  else
    for kind in "${kinds[@]}"; do
      up_kind "$kind"
      measure "$kind"
      down_kind "$kind"
    done
  fi
  trap - EXIT
  log "bench-nodeapi: figures in $OUT/figures.txt, every sample in $OUT/samples.tsv"
  cat "$OUT/figures.txt"
}

main "$@"
