#!/usr/bin/env bash
# Starts the real control plane for the integration tests: etcd,
# kube-apiserver and kube-controller-manager on 127.0.0.1, on free ports, with
# their state, logs, PID files, certificates and kubeconfigs under
# $NODEAGENT_CONTROLPLANE_DIR (default /var/lib/nodeagent-test/controlplane).
# Prints the path of a shell-sourceable env file describing it. If the control
# plane is already up and ready it only rewrites and prints that file. Stop it
# with hack/controlplane-down.sh.
#
# The cluster is set up as kubeadm sets one up: one CA signs the apiserver's
# serving certificate and every client certificate, bootstrap tokens
# authenticate, and the RBAC bindings kubeadm creates let the
# controller-manager's csrapproving controller approve nodes' client CSRs.
# The aggregation layer is on as kubeadm turns it on (a front-proxy CA of
# its own, the front-proxy-client certificate the apiserver presents to
# extension apiservers such as metrics-server, and the requestheader flags
# that tell those servers whom to believe). There is no scheduler: pods
# must carry spec.nodeName.
#
#   hack/controlplane-up.sh [COMPONENT]
# With COMPONENT (kube-apiserver or kube-controller-manager), only that one is
# (re)started, on the running control plane's ports, state and credentials,
# after hack/controlplane-down.sh COMPONENT stopped it: tests use this to take
# the apiserver away, or to change the controller-manager's settings.
#
# Settings read from the environment:
#   NODEAGENT_CLUSTER_SIGNING_DURATION  lifetime of the certificates the
#     controller-manager signs (default 8760h, as kubeadm)
set -euo pipefail

# lib.sh for phase and seconds_since; controlplane-down.sh's log, sourced
# after it, wins.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Brings in versions.sh, STATE_DIR, the PID files and running_pid/stop_all/purge_state.
# shellcheck source=hack/controlplane-down.sh
source "$(dirname "${BASH_SOURCE[0]}")/controlplane-down.sh"

NODE_NAME="${NODE_NAME:-nodeagent-test-node}"
ETCD_READY_TIMEOUT=30
APISERVER_READY_TIMEOUT=60
CONTROLLER_MANAGER_READY_TIMEOUT=60
CLUSTER_SIGNING_DURATION="${NODEAGENT_CLUSTER_SIGNING_DURATION:-8760h}"
# How soon the node lifecycle controller marks a node whose Lease is not
# renewed Ready=Unknown (kubeadm's default is 50s), and how often it looks.
NODE_MONITOR_GRACE_PERIOD=20s
NODE_MONITOR_PERIOD=2s

PKI_DIR="$STATE_DIR/pki"
CA_FILE="$PKI_DIR/ca.crt"
CA_KEY="$PKI_DIR/ca.key"
FRONT_PROXY_CA_FILE="$PKI_DIR/front-proxy-ca.crt"
FRONT_PROXY_CA_KEY="$PKI_DIR/front-proxy-ca.key"
TOKEN_FILE="$STATE_DIR/tokens.csv"
AUDIT_POLICY="$STATE_DIR/audit-policy.yaml"
AUDIT_LOG="$STATE_DIR/audit/audit.log"
ETCD_LOG="$STATE_DIR/etcd.log"
APISERVER_LOG="$STATE_DIR/kube-apiserver.log"
CONTROLLER_MANAGER_LOG="$STATE_DIR/kube-controller-manager.log"
ADMIN_KUBECONFIG="$STATE_DIR/admin.kubeconfig"
NODE_KUBECONFIG="$STATE_DIR/node.kubeconfig"
CONTROLLER_MANAGER_KUBECONFIG="$STATE_DIR/controller-manager.kubeconfig"
SCHEDULER_LOG="$STATE_DIR/kube-scheduler.log"
SCHEDULER_KUBECONFIG="$STATE_DIR/scheduler.kubeconfig"
WANT_SCHEDULER="${NODEAGENT_SCHEDULER:-0}"


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

# start_daemon PIDFILE LOG CMD...: runs CMD detached, appending to LOG, in its own session (so it
# outlives this script and the terminal's signals) and records its PID. The PID
# is written by the process itself just before exec, so it is exact even if
# setsid had to fork.
start_daemon() {
  local pidfile="$1" logfile="$2"
  shift 2
  rm -f "$pidfile"
  # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
  # 8>&-: the daemon must not inherit (and so hold forever) the state lock.
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 8>&- &
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
  start=$EPOCHREALTIME
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
  log "$name took $(seconds_since "$start")s to become ready"
}

etcd_healthy() {
  curl -sf --max-time 2 "$ETCD_ENDPOINT/health" 2>/dev/null | grep -q '"health":"true"'
}

# admin_curl ARGS...: curl to the apiserver over verified TLS as the admin.
admin_curl() {
  curl -sS --max-time 10 --cacert "$CA_FILE" -H "Authorization: Bearer $ADMIN_TOKEN" "$@"
}

# apiserver_ready: /readyz with the admin token, so it also proves that the CA
# file written into the kubeconfigs verifies the serving certificate.
apiserver_ready() {
  [[ "$(admin_curl -f --max-time 2 "$APISERVER_URL/readyz" 2>/dev/null)" == ok ]]
}

# controller_manager_healthy: its /healthz, which it serves to anyone, over
# the self-signed certificate it made itself.
controller_manager_healthy() {
  [[ "$(curl -sfk --max-time 2 "$CONTROLLER_MANAGER_URL/healthz" 2>/dev/null)" == ok ]]
}

# already_up: every process alive and the apiserver ready, for the same node
# and versions. Loads the running control plane's settings from its env file.
already_up() {
  [[ -f "$ENV_FILE" ]] || return 1
  running_pid "$ETCD_PIDFILE" >/dev/null && running_pid "$APISERVER_PIDFILE" >/dev/null &&
    running_pid "$CONTROLLER_MANAGER_PIDFILE" >/dev/null || return 1
  [[ "$WANT_SCHEDULER" != 1 ]] || running_pid "$SCHEDULER_PIDFILE" >/dev/null || return 1
  local wanted="$NODE_NAME $KUBERNETES_VERSION $ETCD_VERSION" running
  # shellcheck source=/dev/null
  running="$(source "$ENV_FILE" && echo "$NODE_NAME $KUBERNETES_VERSION $ETCD_VERSION")"
  if [[ "$running" != "$wanted" ]]; then
    log "running control plane is for ($running), not ($wanted): restarting it"
    return 1
  fi
  load_env
  apiserver_ready
}

# load_env: the running control plane's settings, from its env file.
load_env() {
  # shellcheck source=/dev/null
  source "$ENV_FILE"
}

# fresh_state_dir: every start begins from empty storage and new credentials,
# so tests never see objects or tokens left from an earlier run.
fresh_state_dir() {
  stop_all
  purge_state
  mkdir -p "$STATE_DIR" "$PKI_DIR" "$(dirname "$AUDIT_LOG")"
  chmod 0700 "$STATE_DIR"
  touch "$STATE_MARKER"
}

# make_ca CRT KEY CN: a self-signed P-256 CA certificate and its key.
make_ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$2" -subj "/CN=$3" -days 3650 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "$1" 2>/dev/null
  chmod 0600 "$2"
}

# sign_cert NAME SUBJECT EXT [CA-CRT CA-KEY]: a P-256 key and a certificate
# for it signed by the cluster CA (or the CA given), as
# $PKI_DIR/NAME.{key,crt}; EXT is an openssl x509 v3 extension section.
sign_cert() {
  local name="$1" subject="$2" ext="$3" ca="${4:-$CA_FILE}" ca_key="${5:-$CA_KEY}"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$PKI_DIR/$name.key" -subj "$subject" -out "$PKI_DIR/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI_DIR/$name.csr" -CA "$ca" -CAkey "$ca_key" -CAcreateserial \
    -days 365 -extfile <(printf '[ext]\n%s\n' "$ext") -extensions ext \
    -out "$PKI_DIR/$name.crt" 2>/dev/null
  rm -f "$PKI_DIR/$name.csr"
  chmod 0600 "$PKI_DIR/$name.key"
}

# write_pki: the cluster CA (kubeadm's "kubernetes" CA), the apiserver's
# serving certificate and the controller-manager's client certificate, the
# front-proxy CA and client certificate, and the service-account key pair.
write_pki() {
  make_ca "$CA_FILE" "$CA_KEY" kubernetes
  # 10.0.0.1 is the "kubernetes" Service's address in --service-cluster-ip-range.
  sign_cert apiserver "/CN=kube-apiserver" "$(printf '%s\n' \
    "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" \
    "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local")"
  sign_cert controller-manager "/CN=system:kube-controller-manager" "$(printf '%s\n' \
    "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=clientAuth")"
  sign_cert scheduler "/CN=system:kube-scheduler" "$(printf '%s\n' \
    "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=clientAuth")"
  # What the apiserver presents to a node's API (:10250) for logs, exec,
  # attach and port-forward, as kubeadm's apiserver-kubelet-client: the node
  # checks it against the cluster CA and asks the apiserver whether this
  # user may reach the nodes/proxy subresource (system:masters may).
  sign_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$(printf '%s\n' \
    "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=clientAuth")"
  # The aggregation layer's: a CA of its own, as kubeadm's front-proxy-ca,
  # so that no client certificate of the cluster CA can pass for the
  # apiserver's proxy; extension apiservers read it from the
  # kube-system/extension-apiserver-authentication ConfigMap.
  make_ca "$FRONT_PROXY_CA_FILE" "$FRONT_PROXY_CA_KEY" front-proxy-ca
  sign_cert front-proxy-client "/CN=front-proxy-client" "$(printf '%s\n' \
    "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=clientAuth")" \
    "$FRONT_PROXY_CA_FILE" "$FRONT_PROXY_CA_KEY"
  openssl genrsa -out "$PKI_DIR/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI_DIR/sa.key" -pubout -out "$PKI_DIR/sa.pub" 2>/dev/null
}

write_credentials() {
  ADMIN_TOKEN="$(random_token)"
  NODE_TOKEN="$(random_token)"
  # token,user,uid,"groups": the node identity is what NodeRestriction and the
  # Node authorizer recognise as the kubelet of $NODE_NAME.
  cat >"$TOKEN_FILE" <<EOT
$ADMIN_TOKEN,admin,admin,"system:masters"
$NODE_TOKEN,system:node:$NODE_NAME,system:node:$NODE_NAME,"system:nodes"
EOT
  chmod 0600 "$TOKEN_FILE"
  # Every request at Metadata level: who asked, what, and the response code,
  # never a body. The tests count the node's requests and its 403s from it.
  cat >"$AUDIT_POLICY" <<EOT
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
EOT
  write_pki
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

# start_apiserver: on APISERVER_URL's port. Its log is appended to, so a
# restart keeps the first run's lines.
start_apiserver() {
  local port="${APISERVER_URL##*:}"
  # --advertise-address=127.0.0.1: otherwise it advertises (and needs) the
  #   host's default-route address.
  # --endpoint-reconciler-type=none: the reconciler would publish the
  #   advertise address as the "kubernetes" Service's endpoint, which endpoint
  #   validation rejects for a loopback address; nothing here needs it.
  # --service-cluster-ip-range: its built-in default is deprecated and logs a
  #   warning; this is that default (its first address is in the serving cert).
  # --allow-privileged=true: static pods (and so their mirror pods) are often
  #   privileged or host-network, as on a real node.
  # --kubelet-*: how it reaches a node's API (logs, exec, port-forward): with
  #   the client certificate above, at the node's InternalIP first (the test
  #   nodes serve on 127.0.0.1 and say so with --node-ip).
  # --requestheader-*, --proxy-client-*: the aggregation layer, as kubeadm
  #   sets it up (see write_pki); --enable-aggregator-routing: it dials an
  #   APIService's endpoint address itself, as there is no kube-proxy to
  #   route a Service's cluster IP.
  # --shutdown-watch-termination-grace-period: on SIGTERM, end open watches
  #   (the controller-manager's, a node's) within 2s; without it they hold
  #   the process until stop_process gives up and kills it.
  # --audit-log-*: JSON lines, rotated at 200 MB, at most 3 old files kept;
  #   blocking mode, so an event is written before its response is sent.
  start_daemon "$APISERVER_PIDFILE" "$APISERVER_LOG" "$KUBE_APISERVER_BIN" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="$port" \
    --etcd-servers="$ETCD_ENDPOINT" \
    --tls-cert-file="$PKI_DIR/apiserver.crt" \
    --tls-private-key-file="$PKI_DIR/apiserver.key" \
    --client-ca-file="$CA_FILE" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI_DIR/sa.pub" \
    --service-account-signing-key-file="$PKI_DIR/sa.key" \
    --token-auth-file="$TOKEN_FILE" \
    --enable-bootstrap-token-auth=true \
    --authorization-mode=Node,RBAC \
    --enable-admission-plugins=NodeRestriction \
    --endpoint-reconciler-type=none \
    --service-cluster-ip-range=10.0.0.0/24 \
    --allow-privileged=true \
    --kubelet-client-certificate="$PKI_DIR/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI_DIR/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --requestheader-client-ca-file="$FRONT_PROXY_CA_FILE" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User \
    --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$PKI_DIR/front-proxy-client.crt" \
    --proxy-client-key-file="$PKI_DIR/front-proxy-client.key" \
    --enable-aggregator-routing=true \
    --shutdown-watch-termination-grace-period=2s \
    --audit-policy-file="$AUDIT_POLICY" \
    --audit-log-path="$AUDIT_LOG" \
    --audit-log-format=json \
    --audit-log-mode=blocking \
    --audit-log-maxsize=200 \
    --audit-log-maxbackup=3
  wait_until kube-apiserver "$APISERVER_PIDFILE" "$APISERVER_LOG" "$APISERVER_READY_TIMEOUT" apiserver_ready
}

# The controllers that make the cluster behave as a kubeadm one for a node:
# CSR approval and signing, node lifecycle (Lease -> Ready=Unknown, taints;
# without taint-eviction-controller no pod is evicted), ownerReference
# garbage collection, service accounts, their tokens, kube-root-ca.crt, and
# bootstrap token signing and expiry. NODEAGENT_CONTROLLERS (a comma list,
# "*" for every default controller, as the conformance run uses) replaces it.
CONTROLLERS=(
  certificatesigningrequest-signing-controller
  certificatesigningrequest-approving-controller
  certificatesigningrequest-cleaner-controller
  node-lifecycle-controller
  garbage-collector-controller
  serviceaccount-controller
  serviceaccount-token-controller
  root-ca-certificate-publisher-controller
  bootstrap-signer-controller
  token-cleaner-controller
)

# start_controller_manager: on CONTROLLER_MANAGER_URL's port, with its own
# client certificate, each controller under its own service account as
# kubeadm runs it. Unlike kubeadm it has no --authentication-kubeconfig:
# /healthz, the one thing asked of its port, needs no authentication.
start_controller_manager() {
  local port="${CONTROLLER_MANAGER_URL##*:}" controllers
  controllers="${NODEAGENT_CONTROLLERS:-$(IFS=,; echo "${CONTROLLERS[*]}")}"
  start_daemon "$CONTROLLER_MANAGER_PIDFILE" "$CONTROLLER_MANAGER_LOG" "$KUBE_CONTROLLER_MANAGER_BIN" \
    --kubeconfig="$CONTROLLER_MANAGER_KUBECONFIG" \
    --bind-address=127.0.0.1 \
    --secure-port="$port" \
    --cert-dir="$STATE_DIR/controller-manager" \
    --leader-elect=false \
    --controllers="$controllers" \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$PKI_DIR/sa.key" \
    --root-ca-file="$CA_FILE" \
    --cluster-signing-cert-file="$CA_FILE" \
    --cluster-signing-key-file="$CA_KEY" \
    --cluster-signing-duration="$CLUSTER_SIGNING_DURATION" \
    --node-monitor-period="$NODE_MONITOR_PERIOD" \
    --node-monitor-grace-period="$NODE_MONITOR_GRACE_PERIOD"
  wait_until kube-controller-manager "$CONTROLLER_MANAGER_PIDFILE" "$CONTROLLER_MANAGER_LOG" \
    "$CONTROLLER_MANAGER_READY_TIMEOUT" controller_manager_healthy
}

scheduler_healthy() {
  [[ "$(curl -sfk --max-time 2 "$SCHEDULER_URL/healthz" 2>/dev/null)" == ok ]]
}

# start_scheduler: on SCHEDULER_URL's port, with its own client certificate
# (system:kube-scheduler, which RBAC binds by default). Only when
# NODEAGENT_SCHEDULER=1: the integration tests bind their pods themselves.
start_scheduler() {
  local port="${SCHEDULER_URL##*:}"
  start_daemon "$SCHEDULER_PIDFILE" "$SCHEDULER_LOG" "$KUBE_SCHEDULER_BIN" \
    --kubeconfig="$SCHEDULER_KUBECONFIG" \
    --bind-address=127.0.0.1 \
    --secure-port="$port" \
    --leader-elect=false
  wait_until kube-scheduler "$SCHEDULER_PIDFILE" "$SCHEDULER_LOG" \
    "$CONTROLLER_MANAGER_READY_TIMEOUT" scheduler_healthy
}

# cluster_role_binding NAME ROLE GROUP: creates it as the admin.
cluster_role_binding() {
  admin_curl -f -o /dev/null -X POST -H 'Content-Type: application/json' \
    "$APISERVER_URL/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" -d @- <<EOT
{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
 "metadata": {"name": "$1"},
 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "$2"},
 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "$3"}]}
EOT
}

# apply_bootstrap_rbac: what `kubeadm init` sets up for TLS bootstrapping:
# bootstrap tokens may create CSRs and read Nodes, the csrapproving controller
# approves their node-client CSRs and nodes' own renewals.
apply_bootstrap_rbac() {
  local bootstrappers=system:bootstrappers:kubeadm:default-node-token
  admin_curl -f -o /dev/null -X POST -H 'Content-Type: application/json' \
    "$APISERVER_URL/apis/rbac.authorization.k8s.io/v1/clusterroles" -d @- <<EOT
{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
 "metadata": {"name": "kubeadm:get-nodes"},
 "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]}
EOT
  cluster_role_binding kubeadm:get-nodes kubeadm:get-nodes "$bootstrappers"
  cluster_role_binding kubeadm:kubelet-bootstrap system:node-bootstrapper "$bootstrappers"
  cluster_role_binding kubeadm:node-autoapprove-bootstrap \
    system:certificates.k8s.io:certificatesigningrequests:nodeclient "$bootstrappers"
  cluster_role_binding kubeadm:node-autoapprove-certificate-rotation \
    system:certificates.k8s.io:certificatesigningrequests:selfnodeclient system:nodes
}

# write_kubeconfig FILE USER TOKEN-OR-CERTNAME: CA and credentials embedded,
# so the file can be copied. A third argument naming a file pair in PKI_DIR
# ("controller-manager") means a client certificate, anything else a token.
write_kubeconfig() {
  local file="$1" user="$2" cred="$3" creds
  if [[ -f "$PKI_DIR/$cred.crt" ]]; then
    creds="    client-certificate-data: $(base64 -w0 "$PKI_DIR/$cred.crt")
    client-key-data: $(base64 -w0 "$PKI_DIR/$cred.key")"
  else
    creds="    token: $cred"
  fi
  cat >"$file" <<EOT
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
$creds
contexts:
- name: $user
  context:
    cluster: nodeagent-test
    user: $user
current-context: $user
EOT
  chmod 0600 "$file"
}

write_env() {
  local tmp="$ENV_FILE.tmp"
  {
    echo "# Written by hack/controlplane-up.sh; source it."
    printf '%s=%q\n' \
      KUBECONFIG_ADMIN "$ADMIN_KUBECONFIG" \
      KUBECONFIG_NODE "$NODE_KUBECONFIG" \
      APISERVER_URL "$APISERVER_URL" \
      APISERVER_CA "$CA_FILE" \
      CLUSTER_CA_CERT "$CA_FILE" \
      CLUSTER_CA_KEY "$CA_KEY" \
      AUDIT_LOG "$AUDIT_LOG" \
      NODE_NAME "$NODE_NAME" \
      ADMIN_TOKEN "$ADMIN_TOKEN" \
      NODE_TOKEN "$NODE_TOKEN" \
      ETCD_ENDPOINT "$ETCD_ENDPOINT" \
      ETCD_PID "$(running_pid "$ETCD_PIDFILE")" \
      APISERVER_PID "$(running_pid "$APISERVER_PIDFILE" || true)" \
      CONTROLLER_MANAGER_URL "$CONTROLLER_MANAGER_URL" \
      CONTROLLER_MANAGER_PID "$(running_pid "$CONTROLLER_MANAGER_PIDFILE" || true)" \
      SCHEDULER_URL "${SCHEDULER_URL:-}" \
      SCHEDULER_PID "$(running_pid "$SCHEDULER_PIDFILE" || true)" \
      CLUSTER_SIGNING_DURATION "$CLUSTER_SIGNING_DURATION" \
      NODE_MONITOR_GRACE_PERIOD "$NODE_MONITOR_GRACE_PERIOD" \
      CONTROLPLANE_DIR "$STATE_DIR" \
      KUBERNETES_VERSION "$KUBERNETES_VERSION" \
      ETCD_VERSION "$ETCD_VERSION" \
      KUBECTL_BIN "$KUBECTL_BIN" \
      METRICS_SERVER_BIN "$METRICS_SERVER_BIN"
  } >"$tmp"
  chmod 0600 "$tmp"
  mv -f "$tmp" "$ENV_FILE"
}

# start_component NAME: (re)starts one stopped component of the running
# control plane with its recorded settings.
start_component() {
  [[ -f "$ENV_FILE" ]] && running_pid "$ETCD_PIDFILE" >/dev/null || {
    log "no running control plane in $STATE_DIR to start $1 in"
    return 1
  }
  local recorded_duration
  load_env
  recorded_duration="$CLUSTER_SIGNING_DURATION"
  CLUSTER_SIGNING_DURATION="${NODEAGENT_CLUSTER_SIGNING_DURATION:-8760h}"
  case "$1" in
    kube-apiserver)
      CLUSTER_SIGNING_DURATION="$recorded_duration"
      running_pid "$APISERVER_PIDFILE" >/dev/null || start_apiserver
      ;;
    kube-controller-manager)
      if running_pid "$CONTROLLER_MANAGER_PIDFILE" >/dev/null; then
        log "kube-controller-manager already runs; stop it first"
        return 1
      fi
      start_controller_manager
      ;;
    *) log "usage: $0 [kube-apiserver|kube-controller-manager]"; return 2 ;;
  esac
}

# start_fresh: a new control plane in a fresh state dir.
start_fresh() {
  local etcd_client_port etcd_peer_port apiserver_port cm_port scheduler_port
  fresh_state_dir
  # A failed start leaves nothing running (the logs stay for a look).
  trap 'log "start failed; stopping what was started"; stop_all' EXIT
  write_credentials
  read -r etcd_client_port etcd_peer_port apiserver_port cm_port scheduler_port < <(free_ports 5)
  APISERVER_URL="https://127.0.0.1:$apiserver_port"
  CONTROLLER_MANAGER_URL="https://127.0.0.1:$cm_port"
  SCHEDULER_URL="https://127.0.0.1:$scheduler_port"
  write_kubeconfig "$ADMIN_KUBECONFIG" admin "$ADMIN_TOKEN"
  write_kubeconfig "$NODE_KUBECONFIG" "system:node:$NODE_NAME" "$NODE_TOKEN"
  write_kubeconfig "$CONTROLLER_MANAGER_KUBECONFIG" system:kube-controller-manager controller-manager
  write_kubeconfig "$SCHEDULER_KUBECONFIG" system:kube-scheduler scheduler
  start_etcd "$etcd_client_port" "$etcd_peer_port"
  start_apiserver
  apply_bootstrap_rbac
  start_controller_manager
  [[ "$WANT_SCHEDULER" != 1 ]] || start_scheduler
  trap - EXIT
}

main() {
  local build=("$HACK_DIR/controlplane-build.sh")
  [[ "$WANT_SCHEDULER" != 1 ]] || build+=(kube-apiserver kube-controller-manager etcd kube-scheduler)
  # A test that restarts one component is not a phase of the run.
  if [[ $# -gt 0 ]]; then
    "${build[@]}"
  else
    phase "control plane: build" "${build[@]}"
  fi
  lock_state_dir

  if [[ $# -gt 0 ]]; then
    start_component "$1"
  elif already_up; then
    log "already up"
  else
    phase "control plane: start" start_fresh
  fi

  write_env
  echo "$ENV_FILE"
}

main "$@"
