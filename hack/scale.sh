#!/usr/bin/env bash
# Many hollow nodes on one control plane (issue 33): starts a control plane
# of its own (etcd, kube-apiserver, kube-controller-manager with every
# default controller, kube-scheduler; hack/controlplane-up.sh with its state
# under /var/lib/nodeagent-scale/$NODE), then SCALE_NODES hollow nodes of one
# kind, each with its own identity (a client certificate for
# system:node:<name>, signed here by the cluster CA), then runs
# test/scale/scaleload: a quiet period (idle), a Deployment of
# SCALE_PODS_PER_NODE pods per node spread by the scheduler until all are
# Running (start-up), a quiet period with them (running), then its deletion
# until all are gone (deletion); it prints what the control plane served in
# each phase (requests by client, verb and resource from the audit log,
# watches, etcd writes, CPU and RSS of each process, pod start-up latency).
#
#   hack/scale.sh                       (as root; make scale)
# Env:
#   NODE=nodeagent|kubelet   the hollow node: the real nodeagent binary on
#                            a fake CRI runtime (test/scale/hollowcri, one
#                            process per node), or the upstream kubemark
#                            (kubemark --morph=kubelet: the kubelet's code on
#                            the same fake runtime, in its own process)
#   SCALE_NODES              nodes (default 10, at most 1000)
#   SCALE_PODS_PER_NODE      pods per node (default 30)
#   SCALE_STEADY             each quiet period (default 60s)
#   SCALE_OUT                results (default /var/lib/nodeagent-scale/results);
#                            a run writes $SCALE_OUT/$NODE-$SCALE_NODES/report.md
#   SCALE_KEEP=1             leave the cluster running afterwards
#
# A hollow nodeagent is the production binary with its CRI endpoint pointed
# at the fake: it makes its cgroups (under /nodeagent-scale/<name>), pod
# directories, /etc/hosts files and volume mounts (tmpfs for projected and
# secret volumes) for real; each node has its own root dir, address on lo
# (10.235.200.1 onwards; its API on :10250 and health on :10248 there) and
# cgroup root. kubemark's hollow kubelet mounts nothing and makes no
# cgroups (its container manager is a stub), keeps its root dir under
# $TMPDIR and serves its API on 0.0.0.0:<a free port> (kubemark fixes the
# address).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"
# shellcheck source=hack/versions.sh
source hack/versions.sh

NODE=${NODE:-nodeagent}
NODES=${SCALE_NODES:-10}
PODS_PER_NODE=${SCALE_PODS_PER_NODE:-30}
STEADY=${SCALE_STEADY:-60s}
BASE=/var/lib/nodeagent-scale/$NODE
NODES_DIR=$BASE/nodes
OUT=${SCALE_OUT:-/var/lib/nodeagent-scale/results}/$NODE-$NODES
CGROUP_PARENT=nodeagent-scale-$NODE
# The fake runtime's filesystems are the host's, whose disk the machine's
# other users fill: with the default thresholds a node would report
# DiskPressure, be tainted, and take no pod. These are the conformance
# run's for its kubelet (hack/cluster-node.sh); kubemark's fake cAdvisor
# reports no pressure at all.
EVICTION_HARD='memory.available<100Mi,nodefs.available<1%,imagefs.available<1%,nodefs.inodesFree<1%'
# How long the nodes may take to be Ready, all together.
READY_TIMEOUT=$((120 + 2 * NODES))

die() {
  log "scale: $*"
  exit 1
}

case $NODE in
nodeagent | kubelet) ;;
*) die "NODE must be nodeagent or kubelet, not $NODE" ;;
esac
[[ $NODES =~ ^[0-9]+$ ]] && ((NODES >= 1 && NODES <= 1000)) || die "SCALE_NODES=$NODES must be in 1..1000"
((EUID == 0)) || die "a hollow nodeagent makes cgroups and mounts: run this as root"

# A control plane of its own, apart from the integration tests' and the
# conformance runs'; the node name it mints a token for is not used.
export NODEAGENT_CONTROLPLANE_DIR=$BASE/controlplane NODEAGENT_SCHEDULER=1 NODEAGENT_CONTROLLERS='*'
export NODE_NAME=scale-$NODE-unused

node_name() { echo "scale-$NODE-$1"; }

# node_ip I: the I-th node's private address on lo (1-based).
node_ip() { echo "10.235.$((200 + ($1 - 1) / 250)).$((($1 - 1) % 250 + 1))"; }

build() {
  log "scale: building (cached by version after the first run)"
  local names=(kube-apiserver kube-controller-manager kube-scheduler etcd)
  [[ $NODE != kubelet ]] || names+=(kubemark)
  hack/controlplane-build.sh "${names[@]}"
  mkdir -p "$BASE/bin"
  if [[ $NODE == nodeagent ]]; then
    hack/build.sh bin/nodeagent
    go build -trimpath -o "$BASE/bin/hollowcri" ./test/scale/hollowcri
  fi
  go build -trimpath -o "$BASE/bin/scaleload" ./test/scale/scaleload
}

# umount_below DIR: what the nodes left mounted under DIR (their volumes).
umount_below() {
  local m
  awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

# stop_nodes: every hollow node and runtime this run started (TERM, a
# bounded wait, KILL), and any an interrupted run left (each names its
# directory under NODES_DIR on its command line).
stop_nodes() {
  local pid pids=()
  if [[ -n ${STARTED:-} && -f $BASE/pids ]]; then
    while read -r _ _ pid; do pids+=("$pid"); done <"$BASE/pids"
  fi
  while read -r pid; do pids+=("$pid"); done < <(pgrep -f -- "$NODES_DIR/" || true)
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "${pids[@]}" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

cleanup() {
  stop_nodes
  [[ ${SCALE_KEEP:-0} == 1 ]] && return 0
  hack/controlplane-down.sh --purge >/dev/null 2>&1 || true
  umount_below "$NODES_DIR"
  rm -rf "$NODES_DIR" "$BASE/pids"
  local i
  for ((i = 1; i <= 1000; i++)); do
    ip addr del "$(node_ip "$i")/32" dev lo 2>/dev/null || break
  done
  [[ ! -d /sys/fs/cgroup/$CGROUP_PARENT ]] ||
    find "/sys/fs/cgroup/$CGROUP_PARENT" -depth -type d -exec rmdir {} + 2>/dev/null || true
}

# node_kubeconfig NAME DIR: a key and a client certificate for
# system:node:NAME in group system:nodes, signed by the cluster CA, as the
# Node authorizer and NodeRestriction know a node, in DIR/kubeconfig.
node_kubeconfig() {
  local name=$1 dir=$2
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$dir/node.key" -subj "/O=system:nodes/CN=system:node:$name" -out "$dir/node.csr" 2>/dev/null
  openssl x509 -req -in "$dir/node.csr" -CA "$CLUSTER_CA_CERT" -CAkey "$CLUSTER_CA_KEY" -CAcreateserial \
    -CAserial "$BASE/ca.srl" -days 365 \
    -extfile <(printf '[ext]\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n') \
    -extensions ext -out "$dir/node.crt" 2>/dev/null
  rm -f "$dir/node.csr"
  chmod 0600 "$dir/node.key"
  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: scale
  cluster:
    server: $APISERVER_URL
    certificate-authority-data: $(base64 -w0 "$CLUSTER_CA_CERT")
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 "$dir/node.crt")
    client-key-data: $(base64 -w0 "$dir/node.key")
contexts:
- name: $name
  context: {cluster: scale, user: $name}
current-context: $name
EOF
  chmod 0600 "$dir/kubeconfig"
}

# wait_socket PID PATH: until the runtime PID serves PATH.
wait_socket() {
  for _ in $(seq 100); do
    [[ -S $2 ]] && return 0
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  tail -n 20 "$(dirname "$2")/runtime.log" >&2 || true
  die "the fake runtime did not serve $2"
}

# start_nodeagent I DIR: the fake runtime, then nodeagent on it.
start_nodeagent() {
  local i=$1 dir=$2 name ip pid
  name=$(node_name "$i")
  ip=$(node_ip "$i")
  ip addr replace "$ip/32" dev lo
  setsid "$BASE/bin/hollowcri" --endpoint="$dir/cri.sock" </dev/null >"$dir/runtime.log" 2>&1 &
  pid=$!
  echo "runtime $name $pid" >>"$BASE/pids"
  wait_socket "$pid" "$dir/cri.sock"
  setsid bin/nodeagent --kubeconfig="$dir/kubeconfig" --node-name="$name" --node-ip="$ip" \
    --cri-endpoint="unix://$dir/cri.sock" --root-dir="$dir/root" --pod-log-dir="$dir/pod-logs" \
    --cgroup-root="/$CGROUP_PARENT/$name" --serve-address="$ip:10248" \
    --address="$ip" --port=10250 --client-ca-file="$CLUSTER_CA_CERT" \
    --eviction-hard="$EVICTION_HARD" --image-gc-high-threshold=100 --image-gc-low-threshold=99 \
    </dev/null >"$dir/node.log" 2>&1 &
  echo "node $name $!" >>"$BASE/pids"
}

# start_kubelet I DIR PORT: kubemark's hollow kubelet, its fake runtime in
# its own process, its image service the fake one too.
start_kubelet() {
  local i=$1 dir=$2 port=$3 name
  name=$(node_name "$i")
  mkdir -p "$dir/tmp"
  # kubemark serves its fake runtime on /tmp/kubelet_remote_<random>.sock
  # (TMPDIR does not move it) and leaves it there when stopped: each runs
  # in a mount namespace of its own with a /tmp of its own, which goes
  # with it. unshare and sh exec, so the PID is kubemark's.
  # shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
  TMPDIR=$dir/tmp setsid unshare --mount --propagation private \
    sh -c 'mount -t tmpfs -o size=1m,mode=1777 tmpfs /tmp && exec "$0" "$@"' \
    "$KUBEMARK_BIN" --morph=kubelet --name="$name" --kubeconfig="$dir/kubeconfig" \
    --kubelet-port="$port" --kubelet-read-only-port=0 --use-host-image-service=false \
    </dev/null >"$dir/node.log" 2>&1 &
  echo "node $name $!" >>"$BASE/pids"
}

start_nodes() {
  local i dir ports=()
  rm -f "$BASE/pids"
  STARTED=1
  if [[ $NODE == kubelet ]]; then
    read -r -a ports < <(python3 - "$NODES" <<'PY'
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))
PY
    )
  fi
  for ((i = 1; i <= NODES; i++)); do
    dir=$NODES_DIR/$(node_name "$i")
    mkdir -p "$dir"
    chmod 0700 "$dir"
    node_kubeconfig "$(node_name "$i")" "$dir"
    "start_$NODE" "$i" "$dir" "${ports[$((i - 1))]:-}"
  done
  log "scale: started $NODES hollow $NODE nodes"
}

ready_nodes() {
  "$KUBECTL_BIN" --kubeconfig="$KUBECONFIG_ADMIN" get nodes --no-headers 2>/dev/null |
    awk -v p="scale-$NODE-" 'index($1, p) == 1 && $2 == "Ready"' | wc -l
}

# wait_ready: every node Ready; a node process that exits fails the run.
wait_ready() {
  local deadline=$((SECONDS + READY_TIMEOUT)) role name pid n
  until (( (n = $(ready_nodes)) >= NODES )); do
    while read -r role name pid; do
      kill -0 "$pid" 2>/dev/null && continue
      tail -n 30 "$NODES_DIR/$name/$role.log" >&2 || true
      die "$role $name (pid $pid) exited; its log: $NODES_DIR/$name/$role.log"
    done <"$BASE/pids"
    ((SECONDS < deadline)) || die "$n of $NODES nodes Ready after ${READY_TIMEOUT}s"
    sleep 2
  done
  log "scale: $NODES nodes Ready"
}

run_load() {
  local pids=$BASE/pids.all
  {
    printf 'control %s %s\n' etcd "$ETCD_PID" kube-apiserver "$APISERVER_PID" \
      kube-controller-manager "$CONTROLLER_MANAGER_PID" kube-scheduler "$SCHEDULER_PID"
    cat "$BASE/pids"
  } >"$pids"
  {
    echo "## NODE=$NODE SCALE_NODES=$NODES SCALE_PODS_PER_NODE=$PODS_PER_NODE hack/scale.sh"
    echo
    echo "load before: $(uptime)"
    echo
  } >"$OUT/report.md"
  "$BASE/bin/scaleload" --kubeconfig="$KUBECONFIG_ADMIN" --nodes="$NODES" --pods-per-node="$PODS_PER_NODE" \
    --steady="$STEADY" --audit-log="$AUDIT_LOG" --etcd-url="$ETCD_ENDPOINT/metrics" --pids="$pids" \
    >>"$OUT/report.md" || die "scaleload failed; the nodes' logs are under $NODES_DIR"
  printf '\nload after: %s\n' "$(uptime)" >>"$OUT/report.md"
  cp "$AUDIT_LOG" "$OUT/audit.log" 2>/dev/null || true
  cat "$OUT/report.md"
}

main() {
  build
  trap cleanup EXIT
  trap 'exit 130' INT TERM HUP
  cleanup
  rm -rf "$OUT"
  mkdir -p "$OUT" "$NODES_DIR"
  # shellcheck source=/dev/null
  source "$(hack/controlplane-up.sh)"
  [[ -n $SCHEDULER_PID ]] || die "the control plane has no kube-scheduler"
  start_nodes
  wait_ready
  run_load
  log "scale: report in $OUT/report.md"
}

main "$@"
