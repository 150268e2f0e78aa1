#!/usr/bin/env bash
# Stops the test control plane started by hack/controlplane-up.sh: the
# kube-scheduler and kube-controller-manager first, then kube-apiserver, then etcd, each by the
# PID it recorded (SIGTERM, a bounded wait, then SIGKILL). Stopping what is not
# running is a no-op.
#   --purge    also deletes the state dir (never the binary cache).
#   COMPONENT  (kube-apiserver or kube-controller-manager) stops only that
#              one; hack/controlplane-up.sh COMPONENT starts it again.
# hack/controlplane-up.sh sources this file for the same helpers; sourced, it
# only defines them.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=hack/versions.sh
source "$HACK_DIR/versions.sh"

# Absolute, because the processes are recognised by this path in their arguments.
STATE_DIR="$(realpath -m "${NODEAGENT_CONTROLPLANE_DIR:-/var/lib/nodeagent-test/controlplane}")"
# Only a directory carrying this marker is ever deleted by --purge or a fresh
# start, so a mistyped NODEAGENT_CONTROLPLANE_DIR cannot wipe unrelated files.
STATE_MARKER="$STATE_DIR/.nodeagent-controlplane"
ETCD_PIDFILE="$STATE_DIR/etcd.pid"
APISERVER_PIDFILE="$STATE_DIR/kube-apiserver.pid"
CONTROLLER_MANAGER_PIDFILE="$STATE_DIR/kube-controller-manager.pid"
SCHEDULER_PIDFILE="$STATE_DIR/kube-scheduler.pid"
# shellcheck disable=SC2034 # used by controlplane-up.sh, which sources this
ENV_FILE="$STATE_DIR/env"

log() { printf '%s: %s\n' "$(basename "$0" .sh)" "$*" >&2; }

# lock_state_dir: serialises up and down on this state dir (test packages run
# in parallel may all call up at once), until the calling script exits. The
# lock file sits beside the state dir because --purge deletes the dir itself.
lock_state_dir() {
  mkdir -p "$(dirname "$STATE_DIR")"
  exec 8>"$STATE_DIR.lock"
  flock 8
}

# running_pid PIDFILE: prints the PID recorded in PIDFILE if that process is
# still alive and is one we started for this state dir (its command line names
# STATE_DIR), so a PID reused by an unrelated process is never mistaken for it.
running_pid() {
  local pid state cmdline
  [[ -f "$1" ]] || return 1
  pid="$(<"$1")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  # A zombie has exited; it only waits for its parent to reap it.
  state="$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" || return 1
  [[ "$state" != Z ]] || return 1
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" || return 1
  [[ "$cmdline" == *"$STATE_DIR"* ]] || return 1
  echo "$pid"
}

# stop_process NAME PIDFILE: TERM, a bounded wait for a clean exit, then KILL.
stop_process() {
  local name="$1" pidfile="$2" pid i
  if pid="$(running_pid "$pidfile")"; then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      running_pid "$pidfile" >/dev/null || break
      sleep 0.1
    done
    if running_pid "$pidfile" >/dev/null; then
      log "$name did not exit within 10s of SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        running_pid "$pidfile" >/dev/null || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$pidfile"
}

# stop_all: clients before servers, so the apiserver never runs without its
# storage.
stop_all() {
  stop_process kube-scheduler "$SCHEDULER_PIDFILE"
  stop_process kube-controller-manager "$CONTROLLER_MANAGER_PIDFILE"
  stop_process kube-apiserver "$APISERVER_PIDFILE"
  stop_process etcd "$ETCD_PIDFILE"
}

# purge_state: deletes the state dir, but only one that this tooling created
# (or an empty one).
purge_state() {
  [[ -e "$STATE_DIR" ]] || return 0
  if [[ ! -f "$STATE_MARKER" ]] && ! rmdir "$STATE_DIR" 2>/dev/null; then
    log "refusing to delete $STATE_DIR: it lacks $(basename "$STATE_MARKER")"
    return 1
  fi
  rm -rf "$STATE_DIR"
}

main() {
  lock_state_dir
  case "${1:-}" in
    "") stop_all ;;
    --purge) stop_all && purge_state ;;
    kube-apiserver) stop_process kube-apiserver "$APISERVER_PIDFILE" ;;
    kube-controller-manager) stop_process kube-controller-manager "$CONTROLLER_MANAGER_PIDFILE" ;;
    *) log "usage: $0 [--purge|kube-apiserver|kube-controller-manager]"; return 2 ;;
  esac
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
