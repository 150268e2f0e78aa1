#!/usr/bin/env bash
# Compares this tree's agent with another build in one run of the binary
# benchmarks (test/integration/binary_ab_test.go): each figure is measured
# round by round on both, and reported as both medians, their ratio and the
# spread of the rounds' ratios. Figures from another day or another of
# these shared machines cannot be compared; figures of one run can.
#
# Usage: hack/bench-ab.sh BASELINE [go test flags]
#   BASELINE   a commit (its cmd/nodeagent is built from a copy of that
#              tree with its own hack/build.sh, cached by commit), or the
#              path of a nodeagent binary. This tree's HEAD, committed and
#              clean, gives the A-vs-A run: the spread noise alone makes.
#   flags      default: -bench 'BenchmarkBinaryAgent|BenchmarkBinaryRemoval'
#              NODEAGENT_AB_ROUNDS=N sets every sub-benchmark's rounds.
# Example: hack/bench-ab.sh 2d9a165 -bench 'BenchmarkBinaryAgent/burst-50'
#
# The baseline must accept every flag the benchmark gives this tree's
# agent; the run fails naming the first it lacks.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"

(($# >= 1)) || { echo "usage: hack/bench-ab.sh COMMIT|BINARY [go test flags]" >&2; exit 2; }
baseline=$1
shift

if [[ -f $baseline ]]; then
  bin=$(realpath "$baseline")
else
  commit=$(git rev-parse --verify --quiet "$baseline^{commit}") ||
    { echo "bench-ab.sh: $baseline is neither a nodeagent binary nor a commit of this repository" >&2; exit 2; }
  bin=${TMPDIR:-/tmp}/nodeagent-ab/$commit/nodeagent
  if [[ ! -x $bin ]]; then
    src=$(mktemp -d)
    trap 'rm -rf "$src"' EXIT
    log "bench-ab: building nodeagent at ${commit:0:12}"
    git archive "$commit" | tar -x -C "$src"
    [[ -f $src/hack/build.sh ]] || { echo "bench-ab.sh: ${commit:0:12} has no hack/build.sh to build its agent as it shipped" >&2; exit 2; }
    (cd "$src" && bash hack/build.sh out/nodeagent)
    mkdir -p "$(dirname "$bin")" && mv "$src/out/nodeagent" "$bin"
  fi
fi
log "bench-ab: baseline $bin"

(($#)) || set -- -bench 'BenchmarkBinaryAgent|BenchmarkBinaryRemoval'
NODEAGENT_BASELINE_BIN=$bin hack/test-integration.sh -run '^$' -benchtime=1x "$@"
