#!/usr/bin/env bash
# Sets the one version of the staging modules: writes staging/VERSION and
# makes every module of the tree require the staging modules it requires
# at that version (the staging modules each other, the root module and
# test/integration them, the latter two through their replace directives).
#
# Usage: hack/set-staging-version.sh vX.Y.Z
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
if (($# != 1)) || [[ ! $1 =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "usage: hack/set-staging-version.sh vMAJOR.MINOR.PATCH" >&2
  exit 2
fi
version=$1
cd "$root"
paths=()
for sib in $(staging_modules "$root"); do
  paths+=("$(awk '$1 == "module" {print $2; exit}' "$sib/go.mod")")
done
for mod in $(go_modules "$root"); do
  for p in "${paths[@]}"; do
    if grep -qE "^[[:space:]]*(require[[:space:]]+)?$p[[:space:]]" "$mod/go.mod"; then
      go mod edit -require="$p@$version" "$mod/go.mod"
    fi
  done
done
echo "$version" >staging/VERSION
log "staging modules at $version: commit, then tag staging/<name>/$version for each (docs/modules.md)"
