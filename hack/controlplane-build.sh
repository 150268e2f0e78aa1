#!/usr/bin/env bash
# Builds the real control plane used by the tests from the Go module proxy,
# at the versions pinned in hack/versions.sh, into a per-machine cache
# outside the repository ($NODEAGENT_CACHE/bin/<name>-<version>):
#   hack/controlplane-build.sh [NAME...]
# NAME is one of kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kubectl, kubemark, etcd (the binaries of k8s.io/kubernetes/cmd and
# etcd; kubemark is the hollow node hack/scale.sh runs), e2e.test
# (the upstream e2e suite, compiled with go test -c), agnhost and nonewprivs
# (programs of the e2e suite's test images) and ginkgo (the CLI that runs the suite in
# parallel) and metrics-server (sigs.k8s.io/metrics-server, at
# METRICS_SERVER_VERSION). Without NAME: kube-apiserver,
# kube-controller-manager, kubectl, etcd and metrics-server, what the
# integration tests need. A binary already in the cache is reused, so a warm
# call returns at once. Needs only Go and the module proxy.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=hack/versions.sh
source "$HACK_DIR/versions.sh"

log() { printf 'controlplane-build: %s\n' "$*" >&2; }

now() { date +%s.%N; }

# elapsed START: seconds since START, one decimal.
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# timed LABEL CMD...: runs CMD and logs how long it took.
timed() {
  local label="$1" start
  shift
  start="$(now)"
  "$@"
  log "$label took $(elapsed "$start")s"
}

# run LOG DIR CMD...: runs CMD in the module in DIR with its (long) output in
# LOG, shown only if it fails. It runs in a process group of its own, waited
# for in the background, so that on_signal can stop it with all its compilers
# instead of leaving them building on as orphans.
run() {
  local out="$1" dir="$2"
  shift 2
  setsid env -C "$dir" "$@" >"$out" 2>&1 &
  CHILD=$!
  if ! wait "$CHILD"; then
    CHILD=
    log "failed: $*"
    tail -n 40 "$out" >&2
    return 1
  fi
  CHILD=
}

# on_signal: stops the running go command and its compilers (their process
# group; the go command itself ignores a lone SIGINT) before the EXIT trap
# removes the work dir.
on_signal() {
  if [[ -n "${CHILD:-}" ]]; then
    kill -TERM -- "-$CHILD" 2>/dev/null || true
    wait "$CHILD" 2>/dev/null || true
  fi
  exit 130
}

# new_module DIR: an empty throwaway main module in DIR.
new_module() {
  mkdir -p "$1"
  env -C "$1" go mod init nodeagent.invalid/controlplane-build 2>/dev/null
}

# staging_modules DIR: the k8s.io modules that k8s.io/kubernetes replaces with its
# own ./staging directories at KUBERNETES_VERSION, read from that version's
# go.mod as the module proxy serves it (the list changes between releases).
staging_modules() {
  local gomod
  gomod="$(env -C "$1" go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -f "$gomod" ]] || { log "no go.mod for k8s.io/kubernetes@$KUBERNETES_VERSION"; return 1; }
  sed -n 's#^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\2#p' "$gomod"
}

# require_kubernetes MOD: makes MOD require k8s.io/kubernetes, with each
# staging module replaced by its published v0.<minor>.<patch> release: the
# local ./staging paths in Kubernetes' own go.mod do not exist outside its tree.
require_kubernetes() {
  local mod="$1" staging_version="v0.${KUBERNETES_VERSION#v1.}" m
  local replaces=()
  for m in $(staging_modules "$mod"); do
    replaces+=("-replace=$m=$m@$staging_version")
  done
  [[ ${#replaces[@]} -gt 0 ]] || { log "found no staging modules to replace"; return 1; }
  log "replacing ${#replaces[@]} staging modules with their $staging_version releases"
  env -C "$mod" go mod edit "${replaces[@]}"
  local pkg gets=()
  for pkg in "${@:2}"; do
    gets+=("$pkg@$KUBERNETES_VERSION")
  done
  run "$WORK/kubernetes-get.log" "$mod" go get "${gets[@]}"
}

# kubernetes_pkg NAME: the package of k8s.io/kubernetes that NAME is built from.
kubernetes_pkg() {
  case "$1" in
    e2e.test) echo k8s.io/kubernetes/test/e2e ;;
    agnhost) echo k8s.io/kubernetes/test/images/agnhost ;;
    nonewprivs) echo k8s.io/kubernetes/test/images/nonewprivs ;;
    *) echo "k8s.io/kubernetes/cmd/$1" ;;
  esac
}

# install_binary TMP FINAL: the binary only ever appears complete under its
# final name, so a killed build cannot leave a half-written one in the cache.
install_binary() {
  chmod 0755 "$1"
  mv -f "$1" "$2"
  log "built $2"
}

# build_kubernetes NAME...: builds the named binaries of k8s.io/kubernetes in
# one module and one go build (e2e.test in a go test -c beside it), so they
# share the module download and the compile of their common packages.
build_kubernetes() {
  local mod="$WORK/kubernetes" out="$WORK/out" minor pkg cmd
  minor="${KUBERNETES_VERSION#v1.}"
  minor="${minor%%.*}"
  # Without these the binaries report v0.0.0 to every client that asks.
  local ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean"
  done
  local pkgs=() all=() e2e=
  for cmd in "$@"; do
    all+=("$(kubernetes_pkg "$cmd")")
    if [[ "$cmd" == e2e.test ]]; then e2e=1; else pkgs+=("$(kubernetes_pkg "$cmd")"); fi
  done

  new_module "$mod"
  mkdir -p "$out"
  timed "kubernetes module download" require_kubernetes "$mod" "${all[@]}"
  # -o DIR/ with several packages writes each binary as DIR/<cmd>.
  if [[ ${#pkgs[@]} -gt 0 ]]; then
    timed "${pkgs[*]##*/} compile" run "$WORK/kubernetes-build.log" "$mod" \
      env CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/" "${pkgs[@]}"
  fi
  if [[ -n "$e2e" ]]; then
    timed "e2e.test compile" run "$WORK/e2e-build.log" "$mod" \
      env CGO_ENABLED=0 go test -c -trimpath -ldflags "$ldflags" -o "$out/e2e.test" k8s.io/kubernetes/test/e2e
  fi
  for cmd in "$@"; do
    install_binary "$out/$cmd" "$(kubernetes_bin "$cmd")"
  done
}

# build_ginkgo: the ginkgo CLI at the version k8s.io/kubernetes requires, in a
# module of its own (the CLI's tools need not agree with Kubernetes').
build_ginkgo() {
  local mod="$WORK/ginkgo" version
  version="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' |
    xargs sed -n 's#^[[:space:]]*github.com/onsi/ginkgo/v2[[:space:]]\{1,\}\(v[^[:space:]]*\).*#\1#p' | head -n 1)"
  [[ -n "$version" ]] || { log "no ginkgo version in k8s.io/kubernetes@$KUBERNETES_VERSION's go.mod"; return 1; }
  new_module "$mod"
  run "$WORK/ginkgo-get.log" "$mod" go get "github.com/onsi/ginkgo/v2/ginkgo@$version"
  timed "ginkgo compile" run "$WORK/ginkgo-build.log" "$mod" \
    env CGO_ENABLED=0 go build -trimpath -o "$WORK/ginkgo.bin" github.com/onsi/ginkgo/v2/ginkgo
  install_binary "$WORK/ginkgo.bin" "$GINKGO_BIN"
}

# kubernetes_bin CMD: where the cache keeps CMD at KUBERNETES_VERSION.
kubernetes_bin() {
  case "$1" in
    kube-apiserver) echo "$KUBE_APISERVER_BIN" ;;
    kube-controller-manager) echo "$KUBE_CONTROLLER_MANAGER_BIN" ;;
    kube-scheduler) echo "$KUBE_SCHEDULER_BIN" ;;
    kubelet) echo "$KUBELET_BIN" ;;
    kubectl) echo "$KUBECTL_BIN" ;;
    kubemark) echo "$KUBEMARK_BIN" ;;
    e2e.test) echo "$E2E_TEST_BIN" ;;
    agnhost) echo "$AGNHOST_BIN" ;;
    nonewprivs) echo "$NONEWPRIVS_BIN" ;;
    etcd) echo "$ETCD_BIN" ;;
    ginkgo) echo "$GINKGO_BIN" ;;
    metrics-server) echo "$METRICS_SERVER_BIN" ;;
    *) log "unknown binary $1"; return 1 ;;
  esac
}

build_etcd() {
  # A module of its own: next to k8s.io/kubernetes, minimal version selection
  # would lift etcd's own API modules to the newer client line Kubernetes uses.
  local mod="$WORK/etcd"
  new_module "$mod"
  timed "etcd module download" run "$WORK/etcd-get.log" "$mod" go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  timed "etcd compile" run "$WORK/etcd-build.log" "$mod" \
    env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
    -o "$WORK/etcd.bin" go.etcd.io/etcd/server/v3
  install_binary "$WORK/etcd.bin" "$ETCD_BIN"
}

# build_metrics_server: metrics-server in a module of its own: it pins its
# own k8s.io library versions, older than Kubernetes' staging releases.
build_metrics_server() {
  local mod="$WORK/metrics-server" pkg=k8s.io/client-go/pkg/version ldflags="-s -w"
  new_module "$mod"
  timed "metrics-server module download" run "$WORK/metrics-server-get.log" "$mod" \
    go get "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION"
  # Its version is client-go's (as its Makefile sets it); without it the
  # server reports v0.0.0.
  ldflags+=" -X $pkg.gitVersion=$METRICS_SERVER_VERSION -X $pkg.gitTreeState=clean"
  timed "metrics-server compile" run "$WORK/metrics-server-build.log" "$mod" \
    env CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" \
    -o "$WORK/metrics-server.bin" sigs.k8s.io/metrics-server/cmd/metrics-server
  install_binary "$WORK/metrics-server.bin" "$METRICS_SERVER_BIN"
}

main() {
  local start names=("$@") name missing=()
  start="$(now)"
  [[ ${#names[@]} -gt 0 ]] || names=(kube-apiserver kube-controller-manager kubectl etcd metrics-server)
  for name in "${names[@]}"; do
    [[ -x "$(kubernetes_bin "$name")" ]] || missing+=("$name")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "cached: ${names[*]}"
    return 0
  fi

  mkdir -p "$NODEAGENT_CACHE/bin" "$NODEAGENT_CACHE/tmp"
  # Parallel callers (several test packages at once) wait for one build
  # instead of each compiling the apiserver on two cores.
  exec 9>"$NODEAGENT_CACHE/build.lock"
  flock 9

  # The throwaway modules must not pick up a go.work of an enclosing checkout;
  # -mod=mod lets the build record any go.sum line that `go get` left out.
  export GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=mod"
  # Work dirs of builds that were killed outright; none is in use under the lock.
  rm -rf "$NODEAGENT_CACHE/tmp"/build.*
  WORK="$(mktemp -d "$NODEAGENT_CACHE/tmp/build.XXXXXX")"
  # The go command's own scratch space too, so that it goes with WORK.
  export GOTMPDIR="$WORK"
  trap 'rm -rf "$WORK"' EXIT
  trap on_signal INT TERM HUP

  # Checked again under the lock: another caller may have just built them.
  local kube=() etcd= ginkgo= metrics_server=
  for name in "${missing[@]}"; do
    [[ ! -x "$(kubernetes_bin "$name")" ]] || continue
    case "$name" in
      etcd) etcd=1 ;;
      ginkgo) ginkgo=1 ;;
      metrics-server) metrics_server=1 ;;
      *) kube+=("$name") ;;
    esac
  done
  [[ ${#kube[@]} -eq 0 ]] || build_kubernetes "${kube[@]}"
  [[ -z "$etcd" ]] || build_etcd
  [[ -z "$ginkgo" ]] || build_ginkgo
  [[ -z "$metrics_server" ]] || build_metrics_server
  log "done in $(elapsed "$start")s"
}

main "$@"
