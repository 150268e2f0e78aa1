#!/usr/bin/env bash
# Runs nodeagent in the foreground, standalone (no apiserver), on the
# example manifests, against the private containerd of hack/containerd-up.sh,
# with every piece of its state under a throwaway directory. Ctrl-C stops
# the agent and leaves the pods running; run it again and it adopts them.
#
# Usage: hack/run.sh [nodeagent flags...]      (as root)
# Env:   NODEAGENT_RUN_DIR        state dir (default /var/lib/nodeagent-run)
#        NODEAGENT_RUN_MANIFESTS  manifest dir (default examples/manifests)
#        NODEAGENT_RUN_ADDRESS    --serve-address (default 127.0.0.1:10248)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"

STATE=${NODEAGENT_RUN_DIR:-/var/lib/nodeagent-run}
MANIFESTS=${NODEAGENT_RUN_MANIFESTS:-$root/examples/manifests}
ADDRESS=${NODEAGENT_RUN_ADDRESS:-127.0.0.1:10248}

die() {
  echo "run.sh: $*" >&2
  exit 1
}

((EUID == 0)) || die "nodeagent runs containers and manages cgroups: run this as root (sudo make run)"

log "run: starting containerd and importing the local images (hack/containerd-up.sh)"
env_file=$(hack/containerd-up.sh)
# shellcheck source=/dev/null
source "$env_file"

log "run: building bin/nodeagent and bin/manifestctl"
hack/build.sh bin/nodeagent
hack/build.sh bin/manifestctl

# The examples name the busybox image by the tag this machine's
# busybox-static gives it; if the local tag differs, run copies with it.
manifest_dir=$MANIFESTS
if grep -rqs 'localhost/nodeagent/busybox:' "$MANIFESTS" && ! grep -rqs "$BUSYBOX_IMAGE" "$MANIFESTS"; then
  manifest_dir=$STATE/manifests
  log "run: the local busybox image is $BUSYBOX_IMAGE; running copies of $MANIFESTS in $manifest_dir"
  mkdir -p "$manifest_dir"
  for f in "$MANIFESTS"/*; do
    sed "s|localhost/nodeagent/busybox:[^[:space:]\"']*|$BUSYBOX_IMAGE|g" "$f" >"$manifest_dir/$(basename "$f")"
  done
fi

mkdir -p "$STATE"
socket=$STATE/nodeagent.sock
# The settings manifestctl shares go in a config file, which both read.
config=$STATE/nodeagent.yaml
cat >"$config" <<-CONFIG
	manifest-dir: $manifest_dir
	root-dir: $STATE/root
	pod-log-dir: $STATE/pod-logs
	local-api-socket: $socket
CONFIG
cat >&2 <<-INFO

	nodeagent is starting (Ctrl-C stops the agent; the pods keep running).
	  manifests:  $manifest_dir   (add, edit or remove a file: the agent follows)
	  manifestctl: bin/manifestctl --config $config get   (and apply --wait, describe, logs, rm, ...)
	  pods:       curl -s --unix-socket $socket http://x/v1/pods
	  one pod:    curl -s --unix-socket $socket http://x/v1/pods/default/web-$(hostname | tr '[:upper:]' '[:lower:]')
	  refusals:   curl -s --unix-socket $socket http://x/v1/manifests/errors
	  pod logs:   $STATE/pod-logs/<namespace>_<pod>_<uid>/<container>/0.log
	  metrics:    curl -s http://$ADDRESS/metrics   (and /healthz, /readyz)
	  web pod:    curl -s http://127.0.0.1:8088/
	  stop pods:  remove their manifests while the agent runs, or hack/containerd-down.sh

INFO

exec bin/nodeagent \
  --config "$config" \
  --cri-endpoint "$CONTAINERD_ENDPOINT" \
  --serve-address "$ADDRESS" \
  "$@"
