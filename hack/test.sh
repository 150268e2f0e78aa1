#!/usr/bin/env bash
# What `make test` and CI run: the static checks, the unit tests, a bounded
# fuzzing run, the integration tests against real containerd, etcd and
# kube-apiserver, then the module test (last: it reuses the compilation of
# the binaries the integration tests built). Each is its make target; the
# run stops at the first that fails, and at its end, failed or not, prints
# how long each took, with the steps inside them (hack/lib.sh's phase).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(repo_root)"

phases_init
trap phases_finish EXIT
for target in verify test-unit test-fuzz test-integration test-modules; do
  phase "$target" "${MAKE:-make}" --no-print-directory "$target" || exit
done
