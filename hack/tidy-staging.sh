#!/usr/bin/env bash
# `go mod tidy` for staging modules (default: all of them), with their
# siblings taken from the tree as verify.sh checks them (staging_modfile in
# lib.sh): their go.mod keeps requiring the siblings at staging/VERSION with
# no replace directive, and their go.sum gets no sums of unpublished
# versions.
#
# Usage: hack/tidy-staging.sh [staging/NAME...]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
cd "$root"
mods=("$@")
((${#mods[@]} > 0)) || mapfile -t mods < <(staging_modules "$root")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mod in "${mods[@]}"; do
  mod=${mod%/}
  if [[ $mod != staging/* || ! -f $mod/go.mod ]]; then
    echo "tidy-staging.sh: $mod is not a staging module directory (staging/NAME)" >&2
    exit 2
  fi
  modfile=$(staging_modfile "$root" "$mod" "$work")
  (cd "$mod" && GOWORK=off go mod tidy -modfile="$modfile")
  for sib in $(staging_modules "$root"); do
    go mod edit -dropreplace="$(awk '$1 == "module" {print $2; exit}' "$sib/go.mod")" "$modfile"
  done
  cp "$modfile" "$mod/go.mod"
  cp "${modfile%.mod}.sum" "$mod/go.sum"
  log "tidy: $mod"
done
