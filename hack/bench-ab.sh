#!/usr/bin/env bash
# Compares this tree's agent with another build in one run of the binary
# benchmarks (test/integration/binary_ab_test.go): each figure is measured
# round by round on both, and reported as both medians, their ratio and the
# spread of the rounds' ratios. Figures from another day or another of
# these shared machines cannot be compared; figures of one run can.
#
# Usage: hack/bench-ab.sh BASELINE [--new NEW] [go test flags]
#   BASELINE   a commit (its cmd/nodeagent is built from a copy of that
#              tree with its own hack/build.sh, cached by commit), or the
#              path of a nodeagent binary. This tree's HEAD, committed and
#              clean, gives the A-vs-A run: the spread noise alone makes.
#   NEW        likewise, measured instead of this tree's agent (two
#              earlier builds compared: one change of a series alone)
#   flags      default: -bench 'BenchmarkBinaryAgent|BenchmarkBinaryRemoval'
#              NODEAGENT_AB_ROUNDS=N sets every sub-benchmark's rounds.
#              -bench splits its pattern at each / into one per level:
#              'BenchmarkBinaryAgent/^(one-at-a-time|burst-50)$/^(host-network|new|base|ab)'
# Example: hack/bench-ab.sh 2d9a165 -bench 'BenchmarkBinaryAgent/burst-50'
#
# Both builds must accept every flag the benchmark gives this tree's
# agent; the run fails naming the first one lacks.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"

usage="usage: hack/bench-ab.sh COMMIT|BINARY [--new COMMIT|BINARY] [go test flags]"
(($# >= 1)) || { echo "$usage" >&2; exit 2; }

# agent_of prints the path of the nodeagent binary $1 names, building a
# commit's once.
agent_of() {
  if [[ -f $1 ]]; then
    realpath "$1"
    return
  fi
  local commit bin src
  commit=$(git rev-parse --verify --quiet "$1^{commit}") ||
    { echo "bench-ab.sh: $1 is neither a nodeagent binary nor a commit of this repository" >&2; return 2; }
  bin=${TMPDIR:-/tmp}/nodeagent-ab/$commit/nodeagent
  if [[ ! -x $bin ]]; then
    src=$(mktemp -d)
    log "bench-ab: building nodeagent at ${commit:0:12}" >&2
    git archive "$commit" | tar -x -C "$src"
    [[ -f $src/hack/build.sh ]] ||
      { echo "bench-ab.sh: ${commit:0:12} has no hack/build.sh to build its agent as it shipped" >&2; rm -rf "$src"; return 2; }
    (cd "$src" && bash hack/build.sh out/nodeagent >&2) || { rm -rf "$src"; return 2; }
    mkdir -p "$(dirname "$bin")" && mv "$src/out/nodeagent" "$bin"
    rm -rf "$src"
  fi
  echo "$bin"
}

baseline=$(agent_of "$1")
shift
new=
if [[ ${1:-} == --new ]]; then
  (($# >= 2)) || { echo "$usage" >&2; exit 2; }
  new=$(agent_of "$2")
  shift 2
fi
log "bench-ab: baseline $baseline, new ${new:-(this tree)}"

(($#)) || set -- -bench 'BenchmarkBinaryAgent|BenchmarkBinaryRemoval'
NODEAGENT_BASELINE_BIN=$baseline NODEAGENT_BENCH_BIN=$new hack/test-integration.sh -run '^$' -benchtime=1x "$@"
