#!/usr/bin/env bash
# Runs every module's unit tests with the race detector. Staging modules are
# tested with GOWORK=off, at the versions their own go.mod selects, as a
# project importing one of them builds it (their siblings from the tree: see
# staging_modfile in lib.sh; hack/test-modules.sh fetches them as an importer
# does); the root module is tested inside the workspace. test/integration is not
# a unit test module (see hack/test-integration.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"

modfiles=$(mktemp -d)
trap 'rm -rf "$modfiles"' EXIT
for mod in $(go_modules "$root"); do
  case $mod in test/*) continue ;; esac
  [[ -n $(cd "$mod" && go list ./... 2>/dev/null) ]] || { log "unit: $mod has no packages yet"; continue; }
  log "unit: $mod"
  if [[ $mod == staging/* ]]; then
    (cd "$mod" && GOWORK=off go test -modfile="$(staging_modfile "$root" "$mod" "$modfiles")" -race -count=1 ./...)
  else
    (cd "$mod" && go test -race -count=1 ./...)
  fi
done

log "unit: make install (hack/install_test.sh)"
hack/install_test.sh

log "unit: the run's time by phase (hack/phases_test.sh)"
hack/phases_test.sh

# Releasing the executable's pages must also be safe in a position-
# independent build, whose loader writes into read-only mappings.
log "unit: internal/exepages as a PIE build"
go test -count=1 -buildmode=pie ./internal/exepages
