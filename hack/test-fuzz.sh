#!/usr/bin/env bash
# Fuzzes every Go fuzz target (func FuzzXxx(f *testing.F)) of every module
# for FUZZ_TIME each. The default is a count, 2000 inputs (5-8 s a target
# here, about 40 s in all with the builds), not a duration: Go 1.26's
# coordinator can fail a duration-bounded run with a bare "context deadline
# exceeded" when a worker is mid-input as the time runs out
# (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline to race.
# `go test` alone runs only the seed corpora; this looks for new inputs too.
# A failing input is written under the package's testdata/fuzz/, where
# `go test` replays it from then on.
# Staging modules are fuzzed with GOWORK=off, as hack/test-unit.sh tests them
# (their siblings from the tree: staging_modfile in lib.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"
fuzztime=${FUZZ_TIME:-2000x}
modfiles=$(mktemp -d)
trap 'rm -rf "$modfiles"' EXIT

for mod in $(go_modules "$root"); do
  case $mod in test/*) continue ;; esac
  # Test files declaring fuzz targets, outside nested modules.
  files=$(cd "$mod" && grep -rl --include='*_test.go' '^func Fuzz[A-Z0-9_]' . 2>/dev/null |
    while read -r f; do
      d=$(dirname "$f")
      nested=false
      while [[ $d != . ]]; do [[ -f $d/go.mod ]] && nested=true; d=$(dirname "$d"); done
      $nested || echo "$f"
    done | sort) || true
  for f in $files; do
    pkg=./$(dirname "${f#./}")
    for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$mod/$f"); do
      log "fuzz: $mod $pkg $name for $fuzztime"
      if [[ $mod == staging/* ]]; then
        (cd "$mod" && GOWORK=off go test -modfile="$(staging_modfile "$root" "$mod" "$modfiles")" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg")
      else
        (cd "$mod" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg")
      fi
    done
  done
done
