#!/usr/bin/env bash
# Runs the integration tests against real containerd, an image registry,
# etcd, kube-apiserver and kube-controller-manager. The test framework
# starts and stops them through the hack/*-up.sh and *-down.sh scripts;
# this script builds the control plane first (minutes when cold, cached
# afterwards) so that test timeouts measure tests, and makes sure nothing
# is left running whatever happens.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"

# The whole run, clean-ups included, holds the machine-wide lock the test
# framework also takes: a second run must not stop containerd under a first
# one. flock -o keeps the lock out of the daemons this run starts; the
# framework sees NODEAGENT_TEST_LOCK_HELD and does not lock again.
state_dir=${NODEAGENT_TEST_DIR:-/var/lib/nodeagent-test}
if [[ -z ${NODEAGENT_TEST_LOCK_HELD:-} ]]; then
  mkdir -p "$state_dir"
  log "integration: taking $state_dir/integration.lock (waits while another run holds it)"
  NODEAGENT_TEST_LOCK_HELD=1 exec flock -o "$state_dir/integration.lock" "$root/hack/test-integration.sh" "$@"
fi

cleanup() {
  hack/registry-down.sh --purge >/dev/null 2>&1 || true
  hack/controlplane-down.sh --purge >/dev/null 2>&1 || true
  hack/containerd-down.sh >/dev/null 2>&1 || true
}
# Run alone, it prints its own phases at its end; under `make test`, the
# whole run's are printed there.
phases_init
trap 'cleanup; phases_finish' EXIT

# The tests own the test containerd: start from an empty one, whatever a
# `make run` or an interrupted run left in it.
cleanup

log "integration: building the control plane (cached after the first run)"
phase "integration: control plane build" hack/controlplane-build.sh

# One package at a time: each package's TestMain owns the environment,
# which it starts with the *-up.sh scripts (their phases nest under this
# one).
phase "integration: go test" env -C test/integration go test -race -count=1 -p 1 -timeout 30m ./... "$@"
