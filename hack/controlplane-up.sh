#!/usr/bin/env bash
# Starts the real control plane for the integration tests: etcd and
# kube-apiserver on 127.0.0.1, on free ports, with their state, logs, PID files
# and kubeconfigs under $NODEAGENT_CONTROLPLANE_DIR (default
# /var/lib/nodeagent-test/controlplane). Prints the path of a shell-sourceable
# env file describing it. If the control plane is already up and ready it only
# rewrites and prints that file. Stop it with hack/controlplane-down.sh.
#
# There is no controller-manager or scheduler: pods must carry spec.nodeName,
# and there is no default ServiceAccount nor kube-root-ca.crt ConfigMap.
set -euo pipefail

# Brings in versions.sh, STATE_DIR, the PID files and running_pid/stop_all/purge_state.
# shellcheck source=hack/controlplane-down.sh
source "$(dirname "${BASH_SOURCE[0]}")/controlplane-down.sh"

NODE_NAME="${NODE_NAME:-nodeagent-test-node}"
ETCD_READY_TIMEOUT=30
APISERVER_READY_TIMEOUT=60

PKI_DIR="$STATE_DIR/pki"
CA_FILE="$PKI_DIR/apiserver.crt"
TOKEN_FILE="$STATE_DIR/tokens.csv"
ETCD_LOG="$STATE_DIR/etcd.log"
APISERVER_LOG="$STATE_DIR/kube-apiserver.log"
ADMIN_KUBECONFIG="$STATE_DIR/admin.kubeconfig"
NODE_KUBECONFIG="$STATE_DIR/node.kubeconfig"

now() { date +%s.%N; }
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# free_ports N: N distinct TCP ports free on 127.0.0.1. They are drawn from
# below the kernel's ephemeral range: a port inside it could be taken as the
# local end of an outgoing connection (the apiserver's own, to etcd) in the
# moment between choosing it and binding it.
free_ports() {
  python3 - "$1" <<'PY'
import random, socket, sys
want = int(sys.argv[1])
with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
    eph_lo, eph_hi = map(int, f.read().split())
candidates = [p for p in range(10000, 65536) if not eph_lo <= p <= eph_hi]
random.shuffle(candidates)
held = []
for port in candidates:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        s.close()
        continue
    held.append(s)  # kept bound until all are chosen, so they are distinct
    if len(held) == want:
        break
if len(held) < want:
    sys.exit("no free ports on 127.0.0.1")
print(" ".join(str(s.getsockname()[1]) for s in held))
PY
}

random_token() { openssl rand -hex 24; }

# start_daemon PIDFILE LOG CMD...: runs CMD detached in its own session (so it
# outlives this script and the terminal's signals) and records its PID. The PID
# is written by the process itself just before exec, so it is exact even if
# setsid had to fork.
start_daemon() {
  local pidfile="$1" logfile="$2"
  shift 2
  rm -f "$pidfile"
  # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
  # 8>&-: the daemon must not inherit (and so hold forever) the state lock.
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" </dev/null >"$logfile" 2>&1 8>&- &
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s "$pidfile" ]] && return 0
    sleep 0.1
  done
  log "$(basename "$1") did not start"
  return 1
}

# wait_until NAME PIDFILE LOG TIMEOUT CHECK...: polls CHECK until it succeeds;
# if the process dies or TIMEOUT seconds pass, shows the end of its log.
wait_until() {
  local name="$1" pidfile="$2" logfile="$3" timeout="$4" deadline start
  shift 4
  start="$(now)"
  deadline=$((SECONDS + timeout))
  until "$@"; do
    if ! running_pid "$pidfile" >/dev/null; then
      log "$name exited during startup; last 40 lines of $logfile:"
      tail -n 40 "$logfile" >&2
      return 1
    fi
    if ((SECONDS >= deadline)); then
      log "$name not ready after ${timeout}s; last 40 lines of $logfile:"
      tail -n 40 "$logfile" >&2
      return 1
    fi
    sleep 0.2
  done
  log "$name took $(elapsed "$start")s to become ready"
}

etcd_healthy() {
  curl -sf --max-time 2 "$ETCD_ENDPOINT/health" 2>/dev/null | grep -q '"health":"true"'
}

# apiserver_ready: /readyz over verified TLS with the admin token, so it also
# proves that the CA file written into the kubeconfigs is usable.
apiserver_ready() {
  [[ "$(curl -sf --max-time 2 --cacert "$CA_FILE" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "$APISERVER_URL/readyz" 2>/dev/null)" == ok ]]
}

# already_up: both processes alive and the apiserver ready, for the same node
# and versions. Loads the running control plane's settings from its env file.
already_up() {
  [[ -f "$ENV_FILE" ]] || return 1
  running_pid "$ETCD_PIDFILE" >/dev/null && running_pid "$APISERVER_PIDFILE" >/dev/null || return 1
  local wanted="$NODE_NAME $KUBERNETES_VERSION $ETCD_VERSION" running
  # shellcheck source=/dev/null
  running="$(source "$ENV_FILE" && echo "$NODE_NAME $KUBERNETES_VERSION $ETCD_VERSION")"
  if [[ "$running" != "$wanted" ]]; then
    log "running control plane is for ($running), not ($wanted): restarting it"
    return 1
  fi
  # shellcheck source=/dev/null
  source "$ENV_FILE"
  apiserver_ready
}

# fresh_state_dir: every start begins from empty storage and new credentials,
# so tests never see objects or tokens left from an earlier run.
fresh_state_dir() {
  stop_all
  purge_state
  mkdir -p "$STATE_DIR" "$PKI_DIR"
  chmod 0700 "$STATE_DIR"
  touch "$STATE_MARKER"
}

write_credentials() {
  ADMIN_TOKEN="$(random_token)"
  NODE_TOKEN="$(random_token)"
  # token,user,uid,"groups": the node identity is what NodeRestriction and the
  # Node authorizer recognise as the kubelet of $NODE_NAME.
  cat >"$TOKEN_FILE" <<EOF
$ADMIN_TOKEN,admin,admin,"system:masters"
$NODE_TOKEN,system:node:$NODE_NAME,system:node:$NODE_NAME,"system:nodes"
EOF
  chmod 0600 "$TOKEN_FILE"
  openssl genrsa -out "$PKI_DIR/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI_DIR/sa.key" -pubout -out "$PKI_DIR/sa.pub" 2>/dev/null
}

start_etcd() {
  local client_port="$1" peer_port="$2" peer_url
  ETCD_ENDPOINT="http://127.0.0.1:$client_port"
  peer_url="http://127.0.0.1:$peer_port"
  # --unsafe-no-fsync: the data is thrown away after the tests, and fsync
  # dominates etcd's write latency on a CI disk.
  start_daemon "$ETCD_PIDFILE" "$ETCD_LOG" "$ETCD_BIN" \
    --name=nodeagent-test \
    --data-dir="$STATE_DIR/etcd" \
    --listen-client-urls="$ETCD_ENDPOINT" \
    --advertise-client-urls="$ETCD_ENDPOINT" \
    --listen-peer-urls="$peer_url" \
    --initial-advertise-peer-urls="$peer_url" \
    --initial-cluster="nodeagent-test=$peer_url" \
    --unsafe-no-fsync
  wait_until etcd "$ETCD_PIDFILE" "$ETCD_LOG" "$ETCD_READY_TIMEOUT" etcd_healthy
}

start_apiserver() {
  local port="$1"
  APISERVER_URL="https://127.0.0.1:$port"
  # --advertise-address=127.0.0.1: otherwise it advertises (and needs) the
  #   host's default-route address; with it the self-signed serving cert that
  #   --cert-dir gets names 127.0.0.1, which clients verify against.
  # --endpoint-reconciler-type=none: the reconciler would publish the
  #   advertise address as the "kubernetes" Service's endpoint, which endpoint
  #   validation rejects for a loopback address; nothing here needs it.
  # --disable-admission-plugins=ServiceAccount: no controller-manager creates
  #   ServiceAccounts or their tokens, so pods could not be admitted otherwise.
  # --service-cluster-ip-range: its built-in default is deprecated and logs a
  #   warning; this is that default (its first address is in the serving cert).
  # --allow-privileged=true: static pods (and so their mirror pods) are often
  #   privileged or host-network, as on a real node.
  start_daemon "$APISERVER_PIDFILE" "$APISERVER_LOG" "$KUBE_APISERVER_BIN" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="$port" \
    --etcd-servers="$ETCD_ENDPOINT" \
    --cert-dir="$PKI_DIR" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI_DIR/sa.pub" \
    --service-account-signing-key-file="$PKI_DIR/sa.key" \
    --token-auth-file="$TOKEN_FILE" \
    --authorization-mode=Node,RBAC \
    --enable-admission-plugins=NodeRestriction \
    --disable-admission-plugins=ServiceAccount \
    --endpoint-reconciler-type=none \
    --service-cluster-ip-range=10.0.0.0/24 \
    --allow-privileged=true
  wait_until kube-apiserver "$APISERVER_PIDFILE" "$APISERVER_LOG" "$APISERVER_READY_TIMEOUT" apiserver_ready
}

# write_kubeconfig FILE USER TOKEN: CA embedded, so the file can be copied.
write_kubeconfig() {
  local file="$1" user="$2" token="$3"
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: nodeagent-test
  cluster:
    server: $APISERVER_URL
    certificate-authority-data: $(base64 -w0 "$CA_FILE")
users:
- name: $user
  user:
    token: $token
contexts:
- name: $user
  context:
    cluster: nodeagent-test
    user: $user
current-context: $user
EOF
  chmod 0600 "$file"
}

write_env() {
  write_kubeconfig "$ADMIN_KUBECONFIG" admin "$ADMIN_TOKEN"
  write_kubeconfig "$NODE_KUBECONFIG" "system:node:$NODE_NAME" "$NODE_TOKEN"
  local tmp="$ENV_FILE.tmp"
  {
    echo "# Written by hack/controlplane-up.sh; source it."
    printf '%s=%q\n' \
      KUBECONFIG_ADMIN "$ADMIN_KUBECONFIG" \
      KUBECONFIG_NODE "$NODE_KUBECONFIG" \
      APISERVER_URL "$APISERVER_URL" \
      APISERVER_CA "$CA_FILE" \
      NODE_NAME "$NODE_NAME" \
      ADMIN_TOKEN "$ADMIN_TOKEN" \
      NODE_TOKEN "$NODE_TOKEN" \
      ETCD_ENDPOINT "$ETCD_ENDPOINT" \
      ETCD_PID "$(running_pid "$ETCD_PIDFILE")" \
      APISERVER_PID "$(running_pid "$APISERVER_PIDFILE")" \
      CONTROLPLANE_DIR "$STATE_DIR" \
      KUBERNETES_VERSION "$KUBERNETES_VERSION" \
      ETCD_VERSION "$ETCD_VERSION"
  } >"$tmp"
  chmod 0600 "$tmp"
  mv -f "$tmp" "$ENV_FILE"
}

main() {
  local start etcd_client_port etcd_peer_port apiserver_port
  start="$(now)"
  "$HACK_DIR/controlplane-build.sh"
  lock_state_dir

  if already_up; then
    log "already up"
  else
    fresh_state_dir
    # A failed start leaves nothing running (the logs stay for a look).
    trap 'log "start failed; stopping what was started"; stop_all' EXIT
    write_credentials
    read -r etcd_client_port etcd_peer_port apiserver_port < <(free_ports 3)
    start_etcd "$etcd_client_port" "$etcd_peer_port"
    start_apiserver "$apiserver_port"
    trap - EXIT
    log "ready in $(elapsed "$start")s"
  fi

  write_env
  echo "$ENV_FILE"
}

main "$@"
