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
# shellcheck source=hack/cluster-node.sh
source hack/cluster-node.sh
# Each node its own containerd, control plane, bridge, subnet, address and
# pod cgroups, so that the two runs (and the integration tests' own
# containerd) may run side by side.
case $NODE in
kubelet) node_cluster_init kubelet 1 /var/lib/nodeagent-conformance/kubelet kubepods conformance-kubelet "$OUT/node.log" ;;
nodeagent) node_cluster_init nodeagent 2 /var/lib/nodeagent-conformance/nodeagent conformance-nodeagent conformance-nodeagent "$OUT/node.log" ;;
*) echo "conformance: NODE must be nodeagent or kubelet, not $NODE" >&2; exit 1 ;;
esac

die() {
  log "conformance: $*"
  exit 1
}

((EUID == 0)) || die "the node runs containers and manages cgroups: run this as root"

cleanup() {
  node_cluster_down "${CONFORMANCE_KEEP:-0}"
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
  start_node
  wait_node_ready
  log "conformance: $NODE_NAME ($NODE) is Ready"
  run_suite
  stop_node
  hack/conformance/report.py "$OUT_ROOT"
}

main "$@"
