#!/usr/bin/env bash
# Runs the integration tests against real containerd, etcd and
# kube-apiserver. The test framework starts and stops them through the
# hack/*-up.sh and *-down.sh scripts; this script builds the control plane
# first (minutes when cold, cached afterwards) so that test timeouts measure
# tests, and makes sure nothing is left running whatever happens.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"

cleanup() {
  hack/controlplane-down.sh --purge >/dev/null 2>&1 || true
  hack/containerd-down.sh >/dev/null 2>&1 || true
}
trap cleanup EXIT

# The tests own the test containerd: start from an empty one, whatever a
# `make run` or an interrupted run left in it.
cleanup

log "integration: building the control plane (cached after the first run)"
hack/controlplane-build.sh

log "integration: go test"
# One package at a time: each package's TestMain owns the environment.
(cd test/integration && go test -race -count=1 -p 1 -timeout 30m ./... "$@")
