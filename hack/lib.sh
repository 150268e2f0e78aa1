# shellcheck shell=bash
# Shared helpers for hack/ scripts; source it, do not run it.

# repo_root prints the repository root (the directory holding go.work).
repo_root() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
}

# go_modules prints every module directory below the root, relative to it
# (".", "staging/podtypes", ...), sorted. testdata trees are not modules.
go_modules() {
  local root=$1
  (cd "$root" && find . -name go.mod -not -path './.git/*' -not -path '*/testdata/*' -printf '%h\n' |
    sed -e 's|^\./||' -e 's|^\.$|.|' | sort)
}

# staging_modules prints the staging module directories.
staging_modules() {
  go_modules "$1" | grep '^staging/' || true
}

# staging_modfile writes a copy of the staging module $2's go.mod and go.sum
# into the directory $3, with every staging module replaced by its directory
# in the tree $1, and prints the copy's path, for `go ... -modfile=`. The
# staging go.mod files require their siblings at the published version
# (staging/VERSION) with no replace directive, as an importer needs them;
# in the workspace go.work supplies the tree, and a GOWORK=off command in
# the tree (tidy, the unit tests) supplies it through this copy, so that it
# neither needs the published versions nor writes their sums into go.sum.
staging_modfile() {
  local root=$1 mod=$2 dir=$3 sib
  local out=$dir/$(basename "$mod").mod
  cp "$root/$mod/go.mod" "$out"
  cp "$root/$mod/go.sum" "${out%.mod}.sum" 2>/dev/null || : >"${out%.mod}.sum"
  for sib in $(staging_modules "$root"); do
    go mod edit -replace="$(awk '$1 == "module" {print $2; exit}' "$root/$sib/go.mod")=$root/$sib" "$out"
  done
  echo "$out"
}

# log prints a timestamped progress line to stderr.
log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}
