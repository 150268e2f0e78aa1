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

# log prints a timestamped progress line to stderr.
log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}
