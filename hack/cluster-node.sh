# shellcheck shell=bash
# What hack/conformance.sh and hack/bench-nodeapi.sh share: one node, the
# upstream kubelet or nodeagent, on a private containerd of its own, joined to
# a control plane of its own (hack/controlplane-up.sh with the scheduler and
# every controller), at a private address on the lo interface. Source it from
# the repository root after hack/versions.sh and hack/lib.sh, with die()
# defined, then call node_cluster_init before anything else.

# node_cluster_init KIND INDEX BASE CGROUP_PARENT NAME LOG: the settings of
# the node of KIND (kubelet or nodeagent) and of its containerd and control
# plane. INDEX (1-254) keeps its bridge, subnet and address apart from
# another such cluster's; its state goes under BASE; its pods' cgroups under
# /CGROUP_PARENT (the kubelet always uses /kubepods: its cgroupRoot is left at
# the default); NAME is the Node's name and its CNI network's, and LOG the
# node's log file.
node_cluster_init() {
  NODE=$1
  local n=$2
  NODE_BASE=$3
  NODE_CGROUP_PARENT=$4
  NODE_LOG=$6
  NODE_DIR=$NODE_BASE/node
  export NODEAGENT_CONTAINERD_DIR=$NODE_BASE/containerd
  export NODEAGENT_CNI_NETWORK=$5 NODEAGENT_CNI_BRIDGE=naconf$n
  export NODEAGENT_POD_SUBNET=10.234.$n.0/24
  export NODEAGENT_CGROUP_PARENTS=$NODE_CGROUP_PARENT
  export NODEAGENT_CONTROLPLANE_DIR=$NODE_BASE/controlplane
  export NODEAGENT_SCHEDULER=1 NODEAGENT_CONTROLLERS='*'
  export NODE_NAME=$5
  # The node's address: the kubelet refuses a loopback one (127/8), and
  # nothing may listen on the machine's outside network, so it is a private
  # address added to the lo interface, which only this host reaches (this
  # kernel has no dummy interfaces).
  NODE_IP=10.235.255.$n
  # More flags for the node, after those set here; empty unless the caller
  # sets it.
  NODE_ARGS=()
  node_pid=
}

stop_node() {
  [[ -n $node_pid ]] || return 0
  kill -TERM "$node_pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$node_pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$node_pid" 2>/dev/null || true
  node_pid=
}

# node_cluster_down [keep]: stops the node; unless keep is 1, also the
# control plane and containerd, and removes the node's state and address.
node_cluster_down() {
  stop_node
  # A node an interrupted run left behind: both run with their state
  # under NODE_DIR, which their command lines name.
  pkill -KILL -f -- "--root-dir=$NODE_DIR/" 2>/dev/null || true
  [[ ${1:-0} == 1 ]] && return 0
  hack/controlplane-down.sh --purge >/dev/null 2>&1 || true
  hack/containerd-down.sh >/dev/null 2>&1 || true
  umount_below "$NODE_DIR"
  rm -rf "$NODE_DIR"
  ip addr del "$NODE_IP/32" dev lo 2>/dev/null || true
}

node_address_up() {
  ip addr replace "$NODE_IP/32" dev lo
}

# umount_below DIR: what a node left mounted under DIR (volumes, subpaths).
umount_below() {
  local m
  awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

start_kubelet() {
  local port=$1 healthz=$2 dir=$NODE_DIR/kubelet
  mkdir -p "$dir"
  cat >"$dir/config.yaml" <<-EOF
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	failCgroupV1: false
	cgroupDriver: cgroupfs
	containerRuntimeEndpoint: $CONTAINERD_ENDPOINT
	address: $NODE_IP
	port: $port
	readOnlyPort: 0
	healthzBindAddress: 127.0.0.1
	healthzPort: $healthz
	podLogsDir: $NODE_DIR/pod-logs
	authentication:
	  anonymous: {enabled: false}
	  webhook: {enabled: true}
	  x509: {clientCAFile: $CLUSTER_CA_CERT}
	authorization: {mode: Webhook}
	failSwapOn: false
	resolvConf: /etc/resolv.conf
	serializeImagePulls: false
	imageGCHighThresholdPercent: 100
	imageGCLowThresholdPercent: 99
	evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
	EOF
  setsid "$KUBELET_BIN" --config="$dir/config.yaml" --kubeconfig="$KUBECONFIG_NODE" \
    --root-dir="$dir/root" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=2 \
    "${NODE_ARGS[@]}" </dev/null >"$NODE_LOG" 2>&1 &
  node_pid=$!
}

# Both nodes get the kubelet's smallest eviction thresholds and no image
# garbage collection (thresholds 100/99): the test images are imported,
# not pullable here, and this machine's disk reads 85-90 % used.
start_nodeagent() {
  local port=$1 healthz=$2 dir=$NODE_DIR/nodeagent
  mkdir -p "$dir"
  setsid bin/nodeagent --kubeconfig="$KUBECONFIG_NODE" --node-name="$NODE_NAME" --node-ip="$NODE_IP" \
    --cri-endpoint="$CONTAINERD_ENDPOINT" --root-dir="$dir/root" --pod-log-dir="$NODE_DIR/pod-logs" \
    --cgroup-root=/$NODE_CGROUP_PARENT --serve-address="127.0.0.1:$healthz" \
    --address="$NODE_IP" --port="$port" --client-ca-file="$CLUSTER_CA_CERT" \
    --eviction-hard='memory.available<100Mi,nodefs.available<1%,imagefs.available<1%,nodefs.inodesFree<1%' \
    --image-gc-high-threshold=100 --image-gc-low-threshold=99 \
    "${NODE_ARGS[@]}" </dev/null >"$NODE_LOG" 2>&1 &
  node_pid=$!
}

# start_node: the node of kind NODE, on two free ports (its API's and its
# health endpoint's), once containerd and the control plane are up.
start_node() {
  local ports
  read -r -a ports < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
  "start_$NODE" "${ports[0]}" "${ports[1]}"
}

# node_ready: the Node exists and its Ready condition is True.
node_ready() {
  curl -sf --max-time 5 --cacert "$APISERVER_CA" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "$APISERVER_URL/api/v1/nodes/$NODE_NAME" 2>/dev/null | python3 2>/dev/null -c '
import json, sys
n = json.load(sys.stdin)
sys.exit(0 if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions", [])) else 1)'
}

wait_node_ready() {
  local deadline=$((SECONDS + 120))
  until node_ready; do
    kill -0 "$node_pid" 2>/dev/null || { tail -n 30 "$NODE_LOG" >&2; die "$NODE exited"; }
    ((SECONDS < deadline)) || { tail -n 30 "$NODE_LOG" >&2; die "$NODE_NAME not Ready after 120s"; }
    sleep 1
  done
}
