#!/usr/bin/env bash
# Runs the upstream Kubernetes e2e tests tagged [NodeConformance] against one
# node: nodeagent (the default) or the upstream kubelet (NODE=kubelet), both
# on the same kind of private containerd, with a real control plane
# (etcd, kube-apiserver, kube-controller-manager with every default
# controller, kube-scheduler). Everything is built from the Go module proxy
# at the versions in hack/versions.sh and cached outside the repository; the
# images the tests run are built here (hack/images/e2e.sh).
#
#   hack/conformance.sh                 (as root; make conformance)
# Env:
#   NODE=nodeagent|kubelet   the node under test
#   CONFORMANCE_OUT          results (default /var/lib/nodeagent-conformance/results);
#                            each node's run goes to $CONFORMANCE_OUT/$NODE
#   CONFORMANCE_PROCS        parallel ginkgo processes (default 6)
#   CONFORMANCE_SLOW=1       also the [Slow] tests (143 more, mostly in-place
#                            resize; upstream's own node conformance jobs skip
#                            them too, and here they add about two hours)
#   CONFORMANCE_FOCUS        regexp of tests to run (default \[NodeConformance\])
#   CONFORMANCE_SUBSET=ci    only the tests listed in hack/conformance/ci-subset.txt
#   CONFORMANCE_KEEP=1       leave the cluster running afterwards
# Skipped: [Serial], [Disruptive], [Flaky], [Feature:...], [Slow] (unless
# CONFORMANCE_SLOW=1) and each pattern of hack/conformance/skips.txt, which
# gives its reason.
# Writes $CONFORMANCE_OUT/$NODE/{junit_01.xml,e2e.log,node.log,results.tsv}
# and, once both nodes have run, $CONFORMANCE_OUT/report.md
# (hack/conformance/report.py).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"
# shellcheck source=hack/versions.sh
source hack/versions.sh

NODE=${NODE:-nodeagent}
OUT_ROOT=${CONFORMANCE_OUT:-/var/lib/nodeagent-conformance/results}
OUT=$OUT_ROOT/$NODE
PROCS=${CONFORMANCE_PROCS:-6}
FOCUS=${CONFORMANCE_FOCUS:-'\[NodeConformance\]'}
# Each node its own containerd, control plane, bridge, subnet, address and
# pod cgroups, so that the two runs (and the integration tests' own
# containerd) may run side by side.
case $NODE in
kubelet) n=1 cgroup_parent=kubepods ;;
nodeagent) n=2 cgroup_parent=conformance-nodeagent ;;
*) echo "conformance: NODE must be nodeagent or kubelet, not $NODE" >&2; exit 1 ;;
esac
BASE=/var/lib/nodeagent-conformance/$NODE
NODE_DIR=$BASE/node
export NODEAGENT_CONTAINERD_DIR=$BASE/containerd
export NODEAGENT_CNI_NETWORK=conformance-$NODE NODEAGENT_CNI_BRIDGE=naconf$n
export NODEAGENT_POD_SUBNET=10.234.$n.0/24
export NODEAGENT_CGROUP_PARENTS=$cgroup_parent
export NODEAGENT_CONTROLPLANE_DIR=$BASE/controlplane
export NODEAGENT_SCHEDULER=1 NODEAGENT_CONTROLLERS='*'
export NODE_NAME=conformance-$NODE
# The node's address: the kubelet refuses a loopback one (127/8), and
# nothing may listen on the machine's outside network, so it is a private
# address added to the lo interface, which only this host reaches (this
# kernel has no dummy interfaces).
NODE_IP=10.235.255.$n

die() {
  log "conformance: $*"
  exit 1
}

((EUID == 0)) || die "the node runs containers and manages cgroups: run this as root"

node_pid=
stop_node() {
  [[ -n $node_pid ]] || return 0
  kill -TERM "$node_pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$node_pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$node_pid" 2>/dev/null || true
  node_pid=
}
cleanup() {
  stop_node
  # A node an interrupted run left behind: both run with their state
  # under NODE_DIR, which their command lines name.
  pkill -KILL -f -- "--root-dir=$NODE_DIR/" 2>/dev/null || true
  [[ ${CONFORMANCE_KEEP:-0} == 1 ]] && return 0
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

skip_regexp() {
  local skips=('\[Serial\]' '\[Disruptive\]' '\[Flaky\]' '\[Feature:') line
  [[ ${CONFORMANCE_SLOW:-0} == 1 ]] || skips+=('\[Slow\]')
  while IFS= read -r line; do
    line=${line%%$'\t'*}
    [[ -z $line || $line == '#'* ]] || skips+=("$line")
  done <hack/conformance/skips.txt
  (IFS='|'; echo "${skips[*]}")
}

# focus_regexp: the focus, or the CI subset's names as one alternation.
focus_regexp() {
  if [[ ${CONFORMANCE_SUBSET:-} == ci ]]; then
    grep -v '^#' hack/conformance/ci-subset.txt | sed '/^$/d' |
      python3 -c 'import re,sys; print("|".join(re.escape(l.strip()) for l in sys.stdin))'
  else
    echo "$FOCUS"
  fi
}

build() {
  log "conformance: building (cached by version after the first run)"
  hack/controlplane-build.sh kube-apiserver kube-controller-manager kube-scheduler etcd \
    kubelet e2e.test agnhost nonewprivs ginkgo
  [[ $NODE != nodeagent ]] || hack/build.sh bin/nodeagent
}

# import_images: every image e2e.test names that hack/images/e2e.sh can make,
# under the name the tests use.
import_images() {
  local src list ref tar
  src=$(GOWORK=off GOFLAGS=-mod=mod go env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION
  [[ -d $src ]] || die "no $src: hack/controlplane-build.sh downloads it"
  mapfile -t refs < <("$E2E_TEST_BIN" --list-images 2>/dev/null | grep -E '^[a-z0-9.-]+(:[0-9]+)?/' )
  list=$(AGNHOST_BIN=$AGNHOST_BIN NONEWPRIVS_BIN=$NONEWPRIVS_BIN KUBERNETES_SRC=$src \
    hack/images/e2e.sh "$NODEAGENT_CACHE/e2e-images" "${refs[@]}")
  while read -r ref tar; do
    timeout 60 ctr -a "$CONTAINERD_SOCKET" -n k8s.io images import --snapshotter "$CONTAINERD_SNAPSHOTTER" "$tar" >/dev/null ||
      die "importing $ref failed"
  done <"$list"
  log "conformance: imported $(wc -l <"$list") of ${#refs[@]} images"
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
    </dev/null >"$OUT/node.log" 2>&1 &
  node_pid=$!
}

start_nodeagent() {
  local port=$1 healthz=$2 dir=$NODE_DIR/nodeagent
  mkdir -p "$dir"
  setsid bin/nodeagent --kubeconfig="$KUBECONFIG_NODE" --node-name="$NODE_NAME" --node-ip="$NODE_IP" \
    --cri-endpoint="$CONTAINERD_ENDPOINT" --root-dir="$dir/root" --pod-log-dir="$NODE_DIR/pod-logs" \
    --cgroup-root=/$cgroup_parent --serve-address="127.0.0.1:$healthz" \
    --address="$NODE_IP" --port="$port" --client-ca-file="$CLUSTER_CA_CERT" \
    </dev/null >"$OUT/node.log" 2>&1 &
  node_pid=$!
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
    kill -0 "$node_pid" 2>/dev/null || { tail -n 30 "$OUT/node.log" >&2; die "$NODE exited"; }
    ((SECONDS < deadline)) || { tail -n 30 "$OUT/node.log" >&2; die "$NODE_NAME not Ready after 120s"; }
    sleep 1
  done
}

run_suite() {
  local skip focus start rc=0
  skip=$(skip_regexp)
  focus=$(focus_regexp)
  start=$SECONDS
  # ginkgo runs a compiled suite only under a name ending in .test.
  ln -sf "$E2E_TEST_BIN" "$NODE_DIR/e2e.test"
  log "conformance: running the suite on $NODE ($PROCS processes); log in $OUT/e2e.log"
  "$GINKGO_BIN" --procs="$PROCS" --focus="$focus" --skip="$skip" --timeout=3h --no-color \
    --silence-skips "$NODE_DIR/e2e.test" -- \
    --kubeconfig="$KUBECONFIG_ADMIN" --provider=skeleton --report-dir="$OUT" \
    --e2e-output-dir="$OUT/e2e-output" --disable-log-dump --dump-logs-on-failure=false \
    --allowed-not-ready-nodes=0 --node-schedulable-timeout=2m \
    >"$OUT/e2e.log" 2>&1 || rc=$?
  echo "$((SECONDS - start))" >"$OUT/duration-seconds"
  log "conformance: the suite took $((SECONDS - start))s (ginkgo exit $rc)"
}

main() {
  local ports
  build
  trap cleanup EXIT
  cleanup
  rm -rf "$OUT"
  mkdir -p "$OUT" "$NODE_DIR"
  node_address_up
  # shellcheck source=/dev/null
  source "$(hack/containerd-up.sh)"
  import_images
  # shellcheck source=/dev/null
  source "$(hack/controlplane-up.sh)"
  read -r -a ports < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
  "start_$NODE" "${ports[0]}" "${ports[1]}"
  wait_node_ready
  log "conformance: $NODE_NAME ($NODE) is Ready"
  run_suite
  stop_node
  hack/conformance/report.py "$OUT_ROOT"
}

main "$@"
