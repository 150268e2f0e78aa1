#!/usr/bin/env bash
# Runs the Go benchmarks of every module (or of the modules named as
# arguments), with allocation counts. BENCH_COUNT and BENCH_TIME tune the
# run; pipe several runs into benchstat to compare.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"

mods=("$@")
((${#mods[@]})) || mapfile -t mods < <(go_modules "$root" | grep -v '^test/')
for mod in "${mods[@]}"; do
  [[ -n $(cd "$mod" && go list ./... 2>/dev/null) ]] || continue
  log "bench: $mod"
  (cd "$mod" && go test -run '^$' -bench . -benchmem -count "${BENCH_COUNT:-1}" -benchtime "${BENCH_TIME:-1s}" ./...)
done
